// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDistributionValidatesEventsDeployConfig checks the cluster events collector's
// configuration that deploy/kubernetes/events-configmap.yaml ships.
func TestDistributionValidatesEventsDeployConfig(t *testing.T) {
	validateShippedConfig(t, "events-configmap.yaml", "AWS_REGION=eu-west-1", "POD_NAME=otelcol-k8s-events-0")
}

// validateShippedConfig runs `otelcol-k8s validate` on the data.config.yaml of a ConfigMap in
// deploy/kubernetes, with env added to the environment.
func validateShippedConfig(t *testing.T, file string, env ...string) {
	t.Helper()
	bin := binary(t)
	raw, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "kubernetes", file))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	config, ok := cm.Data["config.yaml"]
	if !ok {
		t.Fatalf("%s has no data.config.yaml", file)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "validate", "--config", path)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the configuration of %s does not validate: %v\n%s", file, err, out)
	}
}
