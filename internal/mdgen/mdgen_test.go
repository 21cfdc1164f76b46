// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{
		"receiver_cri_log_lines_read":  "ReceiverCriLogLinesRead",
		"exporter.cloudwatch_groups.x": "ExporterCloudwatchGroupsX",
		"a":                            "A",
	} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	base := func() Metadata {
		return Metadata{
			Type:          "cri_log",
			GithubProject: "o/p",
			Status:        Status{Class: "receiver", Stability: map[string][]string{"alpha": {"logs"}}},
		}
	}
	tests := []struct {
		name   string
		mutate func(*Metadata)
		want   string
	}{
		{"valid", func(*Metadata) {}, ""},
		{"bad type", func(m *Metadata) { m.Type = "9bad" }, "type"},
		{"no project", func(m *Metadata) { m.GithubProject = "" }, "github_project"},
		{"bad class", func(m *Metadata) { m.Status.Class = "connector" }, "status.class"},
		{"bad level", func(m *Metadata) { m.Status.Stability = map[string][]string{"gold": {"logs"}} }, "stability level"},
		{"bad signal", func(m *Metadata) { m.Status.Stability = map[string][]string{"alpha": {"extension"}} }, "not valid"},
		{"signal twice", func(m *Metadata) {
			m.Status.Stability = map[string][]string{"alpha": {"logs"}, "beta": {"logs"}}
		}, "more than one"},
		{"metric without instrument", func(m *Metadata) {
			m.Telemetry.Metrics = map[string]Metric{"x_y": {Enabled: true, Description: "d"}}
		}, "exactly one"},
		{"metric bad value type", func(m *Metadata) {
			m.Telemetry.Metrics = map[string]Metric{"x_y": {Enabled: true, Description: "d", Sum: &Sum{ValueType: "string"}}}
		}, "value_type"},
		{"metric disabled", func(m *Metadata) {
			m.Telemetry.Metrics = map[string]Metric{"x_y": {Description: "d", Sum: &Sum{ValueType: "int"}}}
		}, "disabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := base()
			tt.mutate(&md)
			err := md.validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v does not mention %q", err, tt.want)
			}
		})
	}
}

func TestGoType(t *testing.T) {
	tests := []struct {
		m    Metric
		want string
	}{
		{Metric{Sum: &Sum{ValueType: "int", Monotonic: true}}, "Int64Counter"},
		{Metric{Sum: &Sum{ValueType: "int"}}, "Int64UpDownCounter"},
		{Metric{Sum: &Sum{ValueType: "double", Monotonic: true}}, "Float64Counter"},
		{Metric{Gauge: &Instrument{ValueType: "int"}}, "Int64Gauge"},
		{Metric{Histogram: &Instrument{ValueType: "double"}}, "Float64Histogram"},
	}
	for _, tt := range tests {
		if got := tt.m.goType(); got != tt.want {
			t.Errorf("goType = %s, want %s", got, tt.want)
		}
	}
}

func TestReplaceStatusBlock(t *testing.T) {
	got, err := replaceStatusBlock([]byte("# x\n"+beginMarker+"\nold\n"+endMarker+"\nrest\n"), []byte("new\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# x\n" + beginMarker + "\nnew\n" + endMarker + "\nrest\n"
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, err := replaceStatusBlock([]byte("no markers"), nil); err == nil {
		t.Fatal("a README without markers must be an error")
	}
}

func TestGenerateIsStable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/demo\n\ngo 1.26.0\n")
	write("factory.go", "package demo\n")
	write("README.md", "# demo\n"+beginMarker+"\n"+endMarker+"\n")
	write("metadata.yaml", `type: demo
github_project: o/p
status:
  class: exporter
  stability:
    alpha: [logs]
telemetry:
  metrics:
    exporter_demo_sent:
      enabled: true
      description: Sent.
      unit: "{events}"
      sum:
        value_type: int
        monotonic: true
`)
	files, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	status := string(files[filepath.Join(dir, "internal", "metadata", "generated_status.go")])
	for _, want := range []string{`component.MustNewType("demo")`, `ScopeName = "example.com/demo"`, "LogsStability = component.StabilityLevelAlpha"} {
		if !strings.Contains(status, want) {
			t.Errorf("generated_status.go lacks %q:\n%s", want, status)
		}
	}
	tel := string(files[filepath.Join(dir, "internal", "metadata", "generated_telemetry.go")])
	if !strings.Contains(tel, "ExporterDemoSent metric.Int64Counter") || !strings.Contains(tel, `"otelcol_exporter_demo_sent"`) {
		t.Errorf("generated_telemetry.go lacks the instrument:\n%s", tel)
	}
	readme := string(files[filepath.Join(dir, "README.md")])
	if !strings.Contains(readme, "[alpha]: logs") {
		t.Errorf("README status block lacks the stability:\n%s", readme)
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	again, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for path, content := range again {
		if string(content) != string(files[path]) {
			t.Errorf("%s changes when generated twice", path)
		}
	}
}
