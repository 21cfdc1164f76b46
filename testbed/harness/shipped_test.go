// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// configMapFromHere is the traces set's node configuration: the one with every component the
// loader handles.
const configMapFromHere = "../../" + ShippedTracesNodeConfigMap

func localForTest(dir string) Local {
	return Local{
		NodeRoot: filepath.Join(dir, "node"), StateDir: filepath.Join(dir, "state"),
		Endpoint: "http://127.0.0.1:4590", HealthAddr: "127.0.0.1:13999",
		Env: map[string]string{
			"K8S_NODE_NAME": "node-1", "AWS_REGION": "us-east-1", "CLUSTER_NAME": "local",
			"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
		},
	}
}

// shippedSection returns the shipped config.yaml as parsed YAML, untouched.
func shippedSection(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(configMapFromHere)
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// loadShipped localizes the shipped configuration with l and returns it parsed as well.
func loadShipped(t *testing.T, l Local) (*Shipped, map[string]any) {
	t.Helper()
	s, err := LoadShippedNodeConfig(configMapFromHere, l)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(s.YAML, &got); err != nil {
		t.Fatal(err)
	}
	return s, got
}

func dig(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	return v
}

// TestShippedNodeConfigKeepsShippedSettings checks that only environment-bound values change:
// every other receiver and exporter setting is the shipped one.
func TestShippedNodeConfigKeepsShippedSettings(t *testing.T) {
	dir := t.TempDir()
	s, got := loadShipped(t, localForTest(dir))
	want := shippedSection(t)

	// The swaps, written out by hand.
	if v := dig(got, "receivers", "cri_log", "include"); !reflect.DeepEqual(v, []any{filepath.Join(dir, "node", "var/log/pods/*/*/*.log")}) {
		t.Errorf("cri_log include = %v", v)
	}
	if v := dig(got, "extensions", "file_storage", "directory"); v != filepath.Join(dir, "state") {
		t.Errorf("file_storage directory = %v", v)
	}
	if v := dig(got, "extensions", "health_check", "endpoint"); v != "127.0.0.1:13999" {
		t.Errorf("health_check endpoint = %v", v)
	}
	if v := dig(got, "exporters", "cloudwatch_groups", "endpoint"); v != "http://127.0.0.1:4590" {
		t.Errorf("exporter endpoint = %v", v)
	}
	if v := dig(got, "receivers", "journal", "directories"); !reflect.DeepEqual(v, []any{filepath.Join(dir, "node", "var/log/journal"), filepath.Join(dir, "node", "run/log/journal")}) {
		t.Errorf("journal directories = %v", v)
	}
	wantMatchers := []any{
		map[string]any{"key": "log.file.path", "pattern": filepath.Join(dir, "node") + "/var/log/journal/*"},
		map[string]any{"key": "log.file.path", "pattern": filepath.Join(dir, "node") + "/run/log/journal/*"},
	}
	if v := dig(got, "exporters", "cloudwatch_groups", "log_type", "journal_matchers"); !reflect.DeepEqual(v, wantMatchers) {
		t.Errorf("exporter journal_matchers = %v", v)
	}
	if v := dig(got, "processors", "k8s_attributes"); v != nil {
		t.Errorf("k8s_attributes kept: %v", v)
	}
	if v := dig(got, "service", "pipelines", "logs", "processors"); !reflect.DeepEqual(v, []any{"memory_limiter", "klog_parser", "object_ref"}) {
		t.Errorf("pipeline processors = %v", v)
	}

	// Without a Kubernetes API server, the components that watch it are left out.
	if v := dig(got, "receivers", "kube_lifecycle"); v != nil {
		t.Errorf("kube_lifecycle kept: %v", v)
	}
	if v := dig(got, "extensions", "trace_context"); v != nil {
		t.Errorf("trace_context kept: %v", v)
	}
	if v := dig(got, "extensions", "pod_metadata"); v != nil {
		t.Errorf("pod_metadata kept: %v", v)
	}
	if v := dig(got, "receivers", "cri_log", "pod_metadata"); v != nil {
		t.Errorf("cri_log's pod_metadata kept: %v", v)
	}
	if v := dig(got, "service", "pipelines", "traces"); v != nil {
		t.Errorf("traces pipeline kept: %v", v)
	}
	if v := dig(got, "receivers", "otlp"); v != nil {
		t.Errorf("otlp kept without a traces pipeline: %v", v)
	}

	// Everything else is the shipped configuration: undo the swaps and compare whole sections.
	rc := dig(got, "receivers", "cri_log").(map[string]any)
	rc["include"] = dig(want, "receivers", "cri_log", "include")
	rc["pod_metadata"] = dig(want, "receivers", "cri_log", "pod_metadata")
	dig(got, "receivers").(map[string]any)["kube_lifecycle"] = dig(want, "receivers", "kube_lifecycle")
	dig(got, "receivers").(map[string]any)["otlp"] = dig(want, "receivers", "otlp")
	dig(got, "exporters").(map[string]any)["otlp_http/xray"] = dig(want, "exporters", "otlp_http/xray")
	dig(got, "processors", "object_ref").(map[string]any)["trace_context"] = dig(want, "processors", "object_ref", "trace_context")
	dig(got, "processors", "object_ref").(map[string]any)["own_pod"] = dig(want, "processors", "object_ref", "own_pod")
	dig(got, "receivers", "journal").(map[string]any)["directories"] = dig(want, "receivers", "journal", "directories")
	ex := dig(got, "exporters", "cloudwatch_groups").(map[string]any)
	delete(ex, "endpoint")
	delete(ex, "log_type") // the shipped exporter keeps the default matchers
	for _, sec := range []string{"receivers", "exporters"} {
		if !reflect.DeepEqual(got[sec], want[sec]) {
			t.Errorf("%s differ from the shipped ones:\n got %v\nwant %v", sec, got[sec], want[sec])
		}
	}
	wantProcs := dig(want, "processors").(map[string]any)
	delete(wantProcs, "k8s_attributes")
	if !reflect.DeepEqual(got["processors"], wantProcs) {
		t.Errorf("processors differ from the shipped ones:\n got %v\nwant %v", got["processors"], wantProcs)
	}
	if len(s.Changes) == 0 {
		t.Error("no changes listed")
	}
	for _, c := range s.Changes {
		t.Log(c)
	}
	if !slices.Contains(s.Env, "K8S_NODE_NAME=node-1") || !slices.Contains(s.Env, "AWS_SECRET_ACCESS_KEY=local") {
		t.Errorf("env = %v", s.Env)
	}
}

// TestShippedNodeConfigMetrics checks the collector's own metrics: without MetricsAddr they are
// off; with it the shipped reader listens there at the shipped level.
func TestShippedNodeConfigMetrics(t *testing.T) {
	dir := t.TempDir()
	_, off := loadShipped(t, localForTest(dir))
	if v := dig(off, "service", "telemetry", "metrics"); !reflect.DeepEqual(v, map[string]any{"level": "none"}) {
		t.Errorf("without MetricsAddr: metrics = %v, want level none", v)
	}

	l := localForTest(dir)
	l.MetricsAddr = "127.0.0.1:18888"
	_, on := loadShipped(t, l)
	if v := dig(on, "service", "telemetry", "metrics", "level"); v != "normal" {
		t.Errorf("with MetricsAddr: level = %v, want the shipped normal", v)
	}
	want := []any{map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{
		"host": "127.0.0.1", "port": 18888,
	}}}}}
	if v := dig(on, "service", "telemetry", "metrics", "readers"); !reflect.DeepEqual(v, want) {
		t.Errorf("with MetricsAddr: readers = %v, want %v", v, want)
	}
	if v := dig(on, "service", "telemetry", "logs"); !reflect.DeepEqual(v, dig(shippedSection(t), "service", "telemetry", "logs")) {
		t.Errorf("logs telemetry changed: %v", v)
	}

	l.MetricsAddr = "no-port"
	if _, err := LoadShippedNodeConfig(configMapFromHere, l); err == nil {
		t.Error("a MetricsAddr without a port was accepted")
	}

	// A configuration without a Prometheus reader has nothing to move: an error, not a run
	// without metrics.
	cfg := shippedSection(t)
	delete(dig(cfg, "service", "telemetry", "metrics").(map[string]any), "readers")
	text, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := yaml.Marshal(map[string]any{"kind": "ConfigMap", "data": map[string]string{"config.yaml": string(text)}})
	if err != nil {
		t.Fatal(err)
	}
	noReader := filepath.Join(dir, "no-reader.yaml")
	if err := os.WriteFile(noReader, cm, 0o600); err != nil {
		t.Fatal(err)
	}
	l.MetricsAddr = "127.0.0.1:18888"
	if _, err := LoadShippedNodeConfig(noReader, l); err == nil {
		t.Error("MetricsAddr was accepted for a configuration without a Prometheus reader")
	}
	l.MetricsAddr = ""
	if _, err := LoadShippedNodeConfig(noReader, l); err != nil {
		t.Errorf("without MetricsAddr: %v", err)
	}
}

func TestShippedNodeConfigErrors(t *testing.T) {
	dir := t.TempDir()
	l := localForTest(dir)
	delete(l.Env, "K8S_NODE_NAME")
	if _, err := LoadShippedNodeConfig(configMapFromHere, l); err == nil {
		t.Error("a variable without a value was accepted")
	}
	// A configuration of another shape is refused, not run half-localized.
	other := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(other, []byte("kind: ConfigMap\ndata:\n  config.yaml: |\n    receivers:\n      otlp: {}\n    service: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadShippedNodeConfig(other, localForTest(dir)); err == nil {
		t.Error("a configuration without cri_log, file_storage, health_check or cloudwatch_groups was accepted")
	}
	if _, err := LoadShippedNodeConfig(filepath.Join(dir, "missing.yaml"), localForTest(dir)); err == nil {
		t.Error("a missing file was accepted")
	}
}

// TestShippedNodeConfigValidates has the distribution validate the localized configuration,
// when the binary is built (OTELCOL_K8S_BIN, as `make e2e` sets it).
func TestShippedNodeConfigValidates(t *testing.T) {
	bin := os.Getenv("OTELCOL_K8S_BIN")
	if bin == "" {
		t.Skip("OTELCOL_K8S_BIN is not set")
	}
	dir := t.TempDir()
	s, err := LoadShippedNodeConfig(configMapFromHere, localForTest(dir))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.WriteShippedNodeConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "validate", "--config", p)
	cmd.Env = append(os.Environ(), s.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("validate: %v\n%s", err, out)
	}
}

// TestShippedNodeConfigWithKube checks the run with an API server: the components that watch it
// get its kubeconfig, the traces pipeline is kept and sends to the test's sink.
func TestShippedNodeConfigWithKube(t *testing.T) {
	dir := t.TempDir()
	l := localForTest(dir)
	l.Kubeconfig = filepath.Join(dir, "kubeconfig")
	l.TracesEndpoint = "http://127.0.0.1:4318"
	_, got := loadShipped(t, l)
	want := shippedSection(t)
	for _, path := range [][]string{{"extensions", "trace_context"}, {"extensions", "pod_metadata"}, {"receivers", "kube_lifecycle"}} {
		c := dig(got, path...).(map[string]any)
		if c["kubeconfig"] != l.Kubeconfig {
			t.Errorf("%v kubeconfig = %v", path, c["kubeconfig"])
		}
		delete(c, "kubeconfig")
		if !reflect.DeepEqual(c, dig(want, path...)) {
			t.Errorf("%v differs from the shipped one: %v", path, c)
		}
	}
	if v := dig(got, "exporters", "otlp_http/xray", "endpoint"); v != "http://127.0.0.1:4318" {
		t.Errorf("otlp_http/xray endpoint = %v", v)
	}
	if !reflect.DeepEqual(dig(got, "service", "pipelines", "traces"), dig(want, "service", "pipelines", "traces")) {
		t.Errorf("traces pipeline = %v", dig(got, "service", "pipelines", "traces"))
	}
	if v := dig(got, "processors", "object_ref", "trace_context"); v != "trace_context" {
		t.Errorf("object_ref trace_context = %v", v)
	}
	l.TracesEndpoint = ""
	if _, err := LoadShippedNodeConfig(configMapFromHere, l); err == nil {
		t.Error("a traces pipeline without a local endpoint was accepted")
	}
}

// TestDefaultShippedNodeConfigHasNoTracing loads the default set's node configuration (tracing
// off): with an API server and no traces endpoint it loads, and nothing of tracing is in it.
func TestDefaultShippedNodeConfigHasNoTracing(t *testing.T) {
	dir := t.TempDir()
	l := localForTest(dir)
	l.Kubeconfig = filepath.Join(dir, "kubeconfig")
	s, err := LoadShippedNodeConfig("../../"+ShippedNodeConfigMap, l)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(s.YAML, &got); err != nil {
		t.Fatal(err)
	}
	for _, p := range [][]string{
		{"extensions", "trace_context"},
		{"receivers", "kube_lifecycle"},
		{"exporters", "otlp_http/xray"},
		{"processors", "object_ref", "trace_context"},
		{"processors", "object_ref", "own_pod"},
		{"service", "pipelines", "traces"},
	} {
		if v := dig(got, p...); v != nil {
			t.Errorf("%v in the default configuration: %v", p, v)
		}
	}
}
