// SPDX-License-Identifier: Apache-2.0

package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/install/image"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/install/internal/testenv"
)

// envRef matches ${env:NAME} and ${env:NAME:-default} in a collector configuration.
var envRef = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// runtimeEnv are variables the workloads set for the Go runtime, not the configuration.
var runtimeEnv = []string{"GOMEMLIMIT", "GOMAXPROCS", "GOGC"}

// TestRenderedConfigsValidate runs `validate` of the binary each workload runs (the image's
// entrypoint, OTELCOL_K8S_BIN, or the node agent's build its command names, OTELCOL_K8S_NODE_BIN) on
// the collector configuration of each workload of the plain manifests and of every chart
// combination, with the environment the workload's pod spec gives it; and checks that every
// variable the configuration reads is set by the pod and every variable the pod sets is read.
func TestRenderedConfigsValidate(t *testing.T) {
	bins := map[string]string{
		image.Binary:     testenv.Path(t, "OTELCOL_K8S_BIN", "run through `make test-modules` (it builds bin/otelcol-k8s)"),
		image.NodeBinary: testenv.Path(t, "OTELCOL_K8S_NODE_BIN", "run through `make test-modules` (it builds bin/otelcol-k8s-node)"),
	}
	combos := append([]struct{ name, values string }{{"plain", "plain"}, {"plain traces", "plain traces"}}, chartCombinations...)
	for _, c := range combos {
		t.Run(c.name, func(t *testing.T) {
			var files map[string]string
			if set, ok := map[string]Set{"plain": Sets[0], "plain traces": Sets[1]}[c.values]; ok {
				m, err := set.Manifests(root)
				require.NoError(t, err)
				files = map[string]string{}
				for n, b := range m {
					if n != "kustomization.yaml" {
						files[n] = string(b)
					}
				}
			} else {
				files = render(t, with(t, c.values))
			}
			objs := objects(t, files)
			n := 0
			for _, w := range objs {
				if w.GetKind() != "DaemonSet" && w.GetKind() != "Deployment" {
					continue
				}
				n++
				t.Run(w.GetName(), func(t *testing.T) { validateWorkload(t, bins, objs, w) })
			}
			require.NotZero(t, n)
		})
	}
}

func validateWorkload(t *testing.T, bins map[string]string, objs []*unstructured.Unstructured, w *unstructured.Unstructured) {
	cs, _, _ := unstructured.NestedSlice(w.Object, "spec", "template", "spec", "containers")
	require.NotEmpty(t, cs)
	program := image.Binary // the image's entrypoint, unless the container names a command
	if cmd, _ := cs[0].(map[string]any)["command"].([]any); len(cmd) > 0 {
		program, _ = cmd[0].(string)
	}
	bin, ok := bins[program]
	require.True(t, ok, "%s runs %q, which the image does not hold", w.GetName(), program)
	vols, _, _ := unstructured.NestedSlice(w.Object, "spec", "template", "spec", "volumes")
	var cmName string
	for _, v := range vols {
		if cm, ok := v.(map[string]any)["configMap"].(map[string]any); ok {
			cmName, _ = cm["name"].(string)
		}
	}
	require.NotEmpty(t, cmName, "the workload mounts its configuration")
	text, _ := collectorConfig(t, objs, cmName)

	podEnv := containerEnv(t, w)
	var env, set []string
	for k, v := range podEnv {
		if v == "<from>" { // downward API: a value as a pod would get it
			v = "value-of-" + k
		}
		env = append(env, k+"="+v)
		set = append(set, k)
	}
	var read []string
	for _, m := range envRef.FindAllStringSubmatch(text, -1) {
		read = append(read, m[1])
	}
	sort.Strings(set)
	read = slices.Compact(slices.Sorted(slices.Values(read)))
	want := slices.DeleteFunc(slices.Clone(set), func(s string) bool { return slices.Contains(runtimeEnv, s) })
	assert.Equal(t, want, read, "the pod sets exactly the variables its configuration reads (and %v)", runtimeEnv)

	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	cmd := exec.Command(bin, "validate", "--config", path)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s does not validate:\n%s\n%s", cmName, out, text)
}
