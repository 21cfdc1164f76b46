// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestProcMemory(t *testing.T) {
	t.Parallel()
	m, err := ProcMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.Anon <= 0 || m.File <= 0 {
		t.Fatalf("a Go test process has a heap and its binary's pages: %+v", m)
	}
	if m.Total() != m.Anon+m.File+m.Shmem {
		t.Fatalf("Total %d of %+v", m.Total(), m)
	}
	if got, want := (Memory{Anon: 3, File: 2, Shmem: 1}).Max(Memory{Anon: 1, File: 5}), (Memory{Anon: 3, File: 5, Shmem: 1}); got != want {
		t.Fatalf("Max: %+v, want %+v", got, want)
	}
	if _, err := ProcMemory(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}

func TestShippedNodeEnv(t *testing.T) {
	t.Parallel()
	env, err := ShippedNodeEnv("../../" + ShippedNodeDaemonSet)
	if err != nil {
		t.Fatal(err)
	}
	if env["GOMEMLIMIT"] == "" || env["AWS_REGION"] == "" {
		t.Fatalf("the DaemonSet's literal values are missing: %v", env)
	}
	if _, ok := env["K8S_NODE_NAME"]; ok {
		t.Fatal("K8S_NODE_NAME comes from the pod's fields, not a literal")
	}
	notDS := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(notDS, []byte("kind: ConfigMap\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ShippedNodeEnv(notDS); err == nil || !strings.Contains(err.Error(), "not a DaemonSet") {
		t.Fatalf("a ConfigMap: %v", err)
	}
	if _, err := ShippedNodeEnv(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("no error for a missing file")
	}
}

func TestShippedEventsEnv(t *testing.T) {
	t.Parallel()
	env, err := ShippedEventsEnv("../../" + ShippedEventsDeployment)
	if err != nil {
		t.Fatal(err)
	}
	if env["GOMAXPROCS"] != "1" || env["GOMEMLIMIT"] == "" {
		t.Fatalf("the Deployment's runtime settings are missing: %v", env)
	}
	if _, ok := env["POD_NAME"]; ok {
		t.Fatal("POD_NAME comes from the pod's fields, not a literal")
	}
	if _, err := ShippedEventsEnv("../../" + ShippedNodeDaemonSet); err == nil || !strings.Contains(err.Error(), "not a Deployment") {
		t.Fatalf("the DaemonSet: %v", err)
	}
}

// TestEventsConfigTakesRuntimeEnv checks the events collector of a local run gets the Go
// runtime settings of the shipped Deployment, unless the caller sets them.
func TestEventsConfigTakesRuntimeEnv(t *testing.T) {
	t.Parallel()
	local := func(env map[string]string) []string {
		t.Helper()
		vals := map[string]string{"POD_NAME": "p", "CLUSTER_NAME": "c", "AWS_REGION": "us-east-1"}
		maps.Copy(vals, env)
		s, err := LoadShippedEventsConfig("../../"+ShippedEventsConfigMap, EventsLocal{
			Kubeconfig: "kc", Endpoint: "http://127.0.0.1:1", TracesEndpoint: "http://127.0.0.1:2/v1/traces", HealthAddr: "127.0.0.1:3", Env: vals,
		})
		if err != nil {
			t.Fatal(err)
		}
		return s.Env
	}
	if env := local(nil); !slices.Contains(env, "GOMAXPROCS=1") || !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "GOMEMLIMIT=") }) {
		t.Errorf("shipped runtime settings missing: %v", env)
	}
	if env := local(map[string]string{"GOMAXPROCS": "2"}); !slices.Contains(env, "GOMAXPROCS=2") || slices.Contains(env, "GOMAXPROCS=1") {
		t.Errorf("the caller's GOMAXPROCS did not win: %v", env)
	}
}

// TestEventsConfigMetrics checks the events collector's own metrics: off without MetricsAddr,
// the shipped reader moved to it with the shipped level kept.
func TestEventsConfigMetrics(t *testing.T) {
	t.Parallel()
	metrics := func(addr string) any {
		t.Helper()
		s, err := LoadShippedEventsConfig("../../"+ShippedEventsConfigMap, EventsLocal{
			Kubeconfig: "kc", Endpoint: "http://127.0.0.1:1", TracesEndpoint: "http://127.0.0.1:2/v1/traces", HealthAddr: "127.0.0.1:3",
			MetricsAddr: addr, Env: map[string]string{"POD_NAME": "p", "CLUSTER_NAME": "c", "AWS_REGION": "us-east-1"},
		})
		if err != nil {
			t.Fatal(err)
		}
		var cfg map[string]any
		if err := yaml.Unmarshal(s.YAML, &cfg); err != nil {
			t.Fatal(err)
		}
		return dig(cfg, "service", "telemetry", "metrics")
	}
	if got := metrics(""); !reflect.DeepEqual(got, map[string]any{"level": "none"}) {
		t.Errorf("without MetricsAddr: %v", got)
	}
	want := map[string]any{"level": "normal", "readers": []any{map[string]any{"pull": map[string]any{"exporter": map[string]any{
		"prometheus": map[string]any{"host": "127.0.0.1", "port": 18889},
	}}}}}
	if got := metrics("127.0.0.1:18889"); !reflect.DeepEqual(got, want) {
		t.Errorf("with MetricsAddr: %v, want %v", got, want)
	}
}

// TestEventsConfigTracesEndpoint checks that the traces endpoint is required exactly when the
// events configuration has an otlp_http exporter (the traces set), and set on it.
func TestEventsConfigTracesEndpoint(t *testing.T) {
	t.Parallel()
	load := func(path, traces string) (*Shipped, error) {
		return LoadShippedEventsConfig("../../"+path, EventsLocal{
			Kubeconfig: "kc", Endpoint: "http://127.0.0.1:1", TracesEndpoint: traces, HealthAddr: "127.0.0.1:3",
			Env: map[string]string{"POD_NAME": "p", "CLUSTER_NAME": "c", "AWS_REGION": "us-east-1"},
		})
	}
	if _, err := load(ShippedEventsConfigMap, ""); err != nil {
		t.Errorf("the default set (no tracing) needs no traces endpoint: %v", err)
	}
	if _, err := load(ShippedTracesEventsConfigMap, ""); err == nil {
		t.Error("the traces set loaded without a traces endpoint")
	}
	s, err := load(ShippedTracesEventsConfigMap, "http://127.0.0.1:2/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(s.YAML, &cfg); err != nil {
		t.Fatal(err)
	}
	if v := dig(cfg, "exporters", "otlp_http/xray", "traces_endpoint"); v != "http://127.0.0.1:2/v1/traces" {
		t.Errorf("traces_endpoint = %v", v)
	}
	if v := dig(cfg, "extensions", "trace_context", "kubeconfig"); v != "kc" {
		t.Errorf("trace_context's kubeconfig = %v, want the local API server's", v)
	}
}
