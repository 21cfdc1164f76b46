// SPDX-License-Identifier: Apache-2.0

// Package distribution tests the built otelcol-k8s binary: that it contains every component of
// builder-config.yaml, that the local configurations validate and that the one of `make run-samples`
// moves records end to end.
//
// The binary is named by OTELCOL_K8S_BIN (`make test-dist` sets it). Without it the tests skip,
// except under CI, where a missing binary is a failure.
package distribution

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// repoRoot is where builder-config.yaml and config/ live, relative to this package.
const repoRoot = "../.."

func binary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OTELCOL_K8S_BIN")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("OTELCOL_K8S_BIN is not set: run this test through `make test-dist`")
		}
		t.Skip("OTELCOL_K8S_BIN is not set: run this test through `make test-dist`")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the distribution binary is missing: %v", err)
	}
	return bin
}

type builderComponent struct {
	GoMod string `yaml:"gomod"`
}

type builderConfig struct {
	Receivers  []builderComponent `yaml:"receivers"`
	Processors []builderComponent `yaml:"processors"`
	Exporters  []builderComponent `yaml:"exporters"`
	Extensions []builderComponent `yaml:"extensions"`
	Connectors []builderComponent `yaml:"connectors"`
}

type listedComponent struct {
	Name   string `yaml:"name"`
	Module string `yaml:"module"`
}

type componentsOutput struct {
	Receivers  []listedComponent `yaml:"receivers"`
	Processors []listedComponent `yaml:"processors"`
	Exporters  []listedComponent `yaml:"exporters"`
	Extensions []listedComponent `yaml:"extensions"`
	Connectors []listedComponent `yaml:"connectors"`
}

func modules(list []builderComponent) []string {
	out := make([]string, 0, len(list))
	for _, c := range list {
		out = append(out, c.GoMod)
	}
	sort.Strings(out)
	return out
}

func listedModules(list []listedComponent) []string {
	out := make([]string, 0, len(list))
	for _, c := range list {
		out = append(out, c.Module)
	}
	sort.Strings(out)
	return out
}

func TestDistributionComponents(t *testing.T) {
	bin := binary(t)
	raw, err := os.ReadFile(filepath.Join(repoRoot, "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want builderConfig
	if err := yaml.Unmarshal(raw, &want); err != nil {
		t.Fatalf("builder-config.yaml: %v", err)
	}
	out, err := exec.Command(bin, "components").Output()
	if err != nil {
		t.Fatalf("%s components: %v", bin, err)
	}
	var got componentsOutput
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("components output is not YAML: %v\n%s", err, out)
	}
	for _, kind := range []struct {
		name string
		want []builderComponent
		got  []listedComponent
	}{
		{"receivers", want.Receivers, got.Receivers},
		{"processors", want.Processors, got.Processors},
		{"exporters", want.Exporters, got.Exporters},
		{"extensions", want.Extensions, got.Extensions},
		{"connectors", want.Connectors, got.Connectors},
	} {
		w, g := modules(kind.want), listedModules(kind.got)
		if strings.Join(w, "\n") != strings.Join(g, "\n") {
			t.Errorf("%s: builder-config.yaml has\n  %s\nthe binary lists\n  %s", kind.name,
				strings.Join(w, "\n  "), strings.Join(g, "\n  "))
		}
	}
}

// TestDistributionValidatesLocalConfig checks the configurations of `make run-samples`
// (config/local.yaml) and of `make run` and the end-to-end scenarios (config/run.yaml).
func TestDistributionValidatesLocalConfig(t *testing.T) {
	bin := binary(t)
	for _, config := range []string{"config/local.yaml", "config/run.yaml"} {
		t.Run(filepath.Base(config), func(t *testing.T) {
			cmd := exec.Command(bin, "validate", "--config", config)
			cmd.Dir = repoRoot
			cmd.Env = append(os.Environ(), "OTELCOL_K8S_STATE="+t.TempDir())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s does not validate: %v\n%s", config, err, out)
			}
		})
	}
}

// TestDistributionValidatesDeployConfig checks the node agent's configuration that
// deploy/kubernetes/configmap.yaml ships.
func TestDistributionValidatesDeployConfig(t *testing.T) {
	validateShippedConfig(t, "configmap.yaml", "AWS_REGION=eu-west-1", "K8S_NODE_NAME=node-1")
}

// TestDistributionRunsLocalConfig runs `make run`'s configuration with an added file exporter
// and checks that every entry of the bundled sample arrives once, partial lines joined.
func TestDistributionRunsLocalConfig(t *testing.T) {
	bin := binary(t)
	out := filepath.Join(t.TempDir(), "records.jsonl")
	health := freePort(t)
	overlay := fmt.Sprintf(`yaml:
exporters:
  file:
    path: %s
    flush_interval: 100ms
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
service:
  pipelines:
    logs:
      exporters: [file]
`, out, health)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", "config/local.yaml", "--config", overlay)
	cmd.Dir = repoRoot
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("collector output:\n%s", logs.String())
		}
	}()

	const wantRecords = 92 // 30 + 20 + 42 sample entries; the 20 KB line arrives once, joined
	deadline := time.Now().Add(90 * time.Second)
	var records []record
	for time.Now().Before(deadline) {
		records = readRecords(t, out)
		if len(records) >= wantRecords {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(records) != wantRecords {
		t.Fatalf("got %d records, want %d", len(records), wantRecords)
	}
	var joined, klog, podRefs int
	namespaces := map[string]int{}
	for _, r := range records {
		if strings.Contains(r.Body, strings.Repeat("x", 20000)) {
			joined++
		}
		if r.Attributes["code.file.path"] != "" && r.Severity != "" {
			klog++
		}
		if r.Attributes["otelcol_k8s.object.kind"] == "Pod" && r.Attributes["otelcol_k8s.object.name"] != "" {
			podRefs++
		}
		namespaces[r.ResourceAttrs["k8s.namespace.name"]]++
	}
	if joined != 1 {
		t.Errorf("the 20 KB entry split across partial lines arrived %d times whole, want 1", joined)
	}
	// 30 scheduler (klog text) and 20 controller-manager (klog JSON) records.
	if klog != 50 {
		t.Errorf("%d records carry klog severity and source location, want 50", klog)
	}
	// The scheduler's "Successfully bound" and "Error scheduling" lines name a pod.
	if podRefs == 0 {
		t.Error("no record names a Pod in otelcol_k8s.object.* (object_ref)")
	}
	if namespaces["kube-system"] != 50 || namespaces["shop"] != 42 {
		t.Errorf("records per k8s.namespace.name resource attribute = %v, want kube-system:50 shop:42", namespaces)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", health))
	if err != nil {
		t.Fatalf("health_check: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("health_check answered %d", resp.StatusCode)
	}
}

// record is what the tests look at in one exported log record.
type record struct {
	Body          string
	Severity      string
	Attributes    map[string]string // string-valued record attributes
	ResourceAttrs map[string]string // string-valued resource attributes
}

// readRecords returns every log record in an OTLP JSON lines file, with its string-valued
// attributes.
func readRecords(t *testing.T, path string) []record {
	t.Helper()
	full := readFullRecords(t, path)
	records := make([]record, 0, len(full))
	strs := func(m map[string]json.RawMessage) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = str(v)
		}
		return out
	}
	for _, r := range full {
		records = append(records, record{Body: r.Body, Severity: r.Severity, Attributes: strs(r.Attrs), ResourceAttrs: strs(r.Resource)})
	}
	return records
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }() // only probing for a free port
	return l.Addr().(*net.TCPAddr).Port
}
