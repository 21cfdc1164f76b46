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
		{"skip lifecycle", func(m *Metadata) { m.Tests.SkipLifecycle = true }, "tests.skip_lifecycle"},
		{"consumer error on a receiver", func(m *Metadata) { m.Tests.ExpectConsumerError = true }, "only processors and exporters"},
		{"consumer error with start error", func(m *Metadata) {
			m.Status.Class = "exporter"
			m.Tests.ExpectConsumerError = true
			m.Tests.ExpectStartError = "x"
		}, "no data is sent"},
		{"setup not an identifier", func(m *Metadata) { m.Tests.GoLeak.Setup = "os.Exit(1); f" }, "tests.goleak.setup"},
		{"teardown not an identifier", func(m *Metadata) { m.Tests.GoLeak.Teardown = "f()" }, "tests.goleak.teardown"},
		{"ignore with a quote", func(m *Metadata) { m.Tests.GoLeak.Ignore.Any = []string{`a") ; b("`} }, "tests.goleak.ignore.any"},
		{"ignore empty", func(m *Metadata) { m.Tests.GoLeak.Ignore.Top = []string{""} }, "tests.goleak.ignore.top"},
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

// generateDemo writes a component module with the given metadata.yaml into a temporary
// directory and generates it.
func generateDemo(t *testing.T, metadataYAML string) (string, map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":        "module example.com/demo\n\ngo 1.26.0\n",
		"factory.go":    "package demo\n",
		"README.md":     "# demo\n" + beginMarker + "\n" + endMarker + "\n",
		"metadata.yaml": metadataYAML,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, files
}

func TestGeneratePackageTest(t *testing.T) {
	dir, files := generateDemo(t, `type: demo
github_project: o/p
status:
  class: receiver
  stability:
    alpha: [logs, traces]
tests:
  goleak:
    ignore:
      top: ["k8s.io/klog/v2.(*flushDaemon).run.func1"]
      any: ["net/http.(*persistConn).readLoop"]
    setup: prepare
    teardown: cleanUp
`)
	got := string(files[filepath.Join(dir, "generated_package_test.go")])
	for _, want := range []string{
		"package demo",
		"\tprepare()\n\tgoleak.VerifyTestMain(m,",
		`goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),`,
		`goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),`,
		"goleak.Cleanup(cleanUp),",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("generated_package_test.go lacks %q:\n%s", want, got)
		}
	}
	_, plain := generateDemo(t, "type: demo\ngithub_project: o/p\nstatus:\n  class: processor\n  stability:\n    alpha: [logs]\n")
	for path, content := range plain {
		if strings.HasSuffix(path, "generated_package_test.go") && !strings.Contains(string(content), "goleak.VerifyTestMain(m)\n") {
			t.Errorf("without tests.goleak the TestMain verifies with no options:\n%s", content)
		}
	}
}

func TestGenerateLifecycleTest(t *testing.T) {
	tests := []struct {
		name     string
		class    string
		signals  string
		tests    string
		want     []string
		wantNone []string
	}{
		{
			name: "receiver", class: "receiver", signals: "[logs, traces]",
			want: []string{
				`confmaptest.LoadConf("metadata.yaml")`, `cm.Sub("tests::config")`,
				"factory.CreateLogs(ctx, receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())",
				"factory.CreateTraces(ctx, receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())",
				"require.NoError(t, c.Start(context.Background(), host))",
			},
			wantNone: []string{"tt.send", "pdata/plog"},
		},
		{
			name: "exporter refusing", class: "exporter", signals: "[logs]",
			tests: "tests:\n  config:\n    endpoint: http://127.0.0.1:1\n  expect_consumer_error: true\n",
			want: []string{
				"factory.CreateLogs(ctx, exportertest.NewNopSettings(metadata.Type), cfg)",
				"c.(consumer.Logs).ConsumeLogs(ctx, ld)",
				`require.Error(t, err, "tests.expect_consumer_error: the data must be refused")`,
			},
		},
		{
			name: "processor accepting", class: "processor", signals: "[metrics]",
			want:     []string{"c.(consumer.Metrics).ConsumeMetrics(ctx, md)", "err = tt.send(context.Background(), c)\n\t\t\t\trequire.NoError(t, err)"},
			wantNone: []string{"require.Error(t, err"},
		},
		{
			name: "exporter failing to start", class: "exporter", signals: "[logs]",
			tests:    "tests:\n  expect_start_error: no server\n",
			want:     []string{`require.ErrorContains(t, c.Start(context.Background(), host), "no server")`},
			wantNone: []string{"tt.send", `"go.opentelemetry.io/collector/consumer"`, "pdata/plog"},
		},
		{
			name: "extension failing to start", class: "extension", signals: "[extension]",
			tests: "tests:\n  expect_start_error: did not complete\n",
			want: []string{
				"factory.Create(ctx, extensiontest.NewNopSettings(metadata.Type), cfg)",
				`require.ErrorContains(t, c.Start(context.Background(), host), "did not complete")`,
			},
			wantNone: []string{"require.NoError(t, c.Start("},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, files := generateDemo(t, "type: demo\ngithub_project: o/p\nstatus:\n  class: "+tt.class+
				"\n  stability:\n    alpha: "+tt.signals+"\n"+tt.tests)
			got := string(files[filepath.Join(dir, "generated_component_test.go")])
			for _, want := range tt.want {
				if !strings.Contains(got, want) {
					t.Errorf("generated_component_test.go lacks %q:\n%s", want, got)
				}
			}
			for _, bad := range tt.wantNone {
				if strings.Contains(got, bad) {
					t.Errorf("generated_component_test.go has %q:\n%s", bad, got)
				}
			}
		})
	}
}
