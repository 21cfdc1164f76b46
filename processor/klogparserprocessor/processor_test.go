// SPDX-License-Identifier: Apache-2.0

package klogparserprocessor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor/internal/metadata"
)

var observed = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// run sends one record per body through a processor built from cfg and returns the output
// records and the telemetry.
func run(t *testing.T, cfg *Config, prepare func(plog.LogRecord, int), bodies ...any) ([]plog.LogRecord, *componenttest.Telemetry) {
	t.Helper()
	return runAt(t, cfg, observed, prepare, bodies...)
}

// runAt is run with the given observed timestamp.
func runAt(t *testing.T, cfg *Config, observed time.Time, prepare func(plog.LogRecord, int), bodies ...any) ([]plog.LogRecord, *componenttest.Telemetry) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	sink := new(consumertest.LogsSink)
	p, err := NewFactory().CreateLogs(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i, b := range bodies {
		lr := lrs.AppendEmpty()
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(observed))
		require.NoError(t, lr.Body().FromRaw(b))
		if prepare != nil {
			prepare(lr, i)
		}
	}
	require.NoError(t, p.ConsumeLogs(context.Background(), ld))
	require.NoError(t, p.Shutdown(context.Background()))
	out := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	recs := make([]plog.LogRecord, out.Len())
	for i := range recs {
		recs[i] = out.At(i)
	}
	return recs, tel
}

func counter(t *testing.T, tel *componenttest.Telemetry, name string) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	m, err := tel.GetMetric("otelcol_" + name)
	if err != nil {
		return got
	}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		f, _ := dp.Attributes.Value(attribute.Key("format"))
		got[f.AsString()] += dp.Value
	}
	return got
}

func TestProcessRecords(t *testing.T) {
	tests := []struct {
		name     string
		cfg      func(*Config)
		body     any
		wantBody any
		sevNum   plog.SeverityNumber
		sevText  string
		ts       time.Time
		attrs    map[string]any
	}{
		{
			name:     "text structured",
			body:     `I0310 00:15:15.525108       1 controller_utils.go:116] "Pod status updated" pod="kube-system/kubedns" status="ready" restarts=3 ratio=0.5 ready=true`,
			wantBody: "Pod status updated", sevNum: plog.SeverityNumberInfo, sevText: "INFO",
			ts: time.Date(2026, 3, 10, 0, 15, 15, 525108000, time.UTC),
			attrs: map[string]any{
				"pod": "kube-system/kubedns", "status": "ready", "restarts": int64(3), "ratio": 0.5, "ready": true,
				"thread.id": int64(1), "code.file.path": "controller_utils.go", "code.line.number": int64(116),
				"otelcol_k8s.klog.format": "text",
			},
		},
		{
			name: "text error with prefix and original",
			cfg: func(c *Config) {
				c.AttributesPrefix = "kv."
				c.KeepOriginal = true
			},
			body:     `E0310 00:00:01.000000   42 reflector.go:158] "Failed to watch" err="forbidden" logger="UnhandledError"`,
			wantBody: "Failed to watch", sevNum: plog.SeverityNumberError, sevText: "ERROR",
			ts: time.Date(2026, 3, 10, 0, 0, 1, 0, time.UTC),
			attrs: map[string]any{
				"kv.logger": "UnhandledError", "exception.message": "forbidden",
				"thread.id": int64(42), "code.file.path": "reflector.go", "code.line.number": int64(158),
				"otelcol_k8s.klog.format": "text",
				"log.record.original":     `E0310 00:00:01.000000   42 reflector.go:158] "Failed to watch" err="forbidden" logger="UnhandledError"`,
			},
		},
		{
			name:     "json object reference stays a map",
			body:     `{"ts":1773101715525.108,"caller":"scheduler/schedule_one.go:314","msg":"Successfully bound pod to node","v":2,"pod":{"name":"kubedns","namespace":"kube-system"},"node":"n1","evaluatedNodes":3}`,
			wantBody: "Successfully bound pod to node", sevNum: plog.SeverityNumberInfo, sevText: "INFO",
			ts: time.UnixMicro(1773101715525108).UTC(),
			attrs: map[string]any{
				"pod":  map[string]any{"name": "kubedns", "namespace": "kube-system"},
				"node": "n1", "evaluatedNodes": int64(3), "otelcol_k8s.klog.verbosity": int64(2),
				"code.file.path": "scheduler/schedule_one.go", "code.line.number": int64(314), "otelcol_k8s.klog.format": "json",
			},
		},
		{
			name:     "json error",
			body:     `{"ts":1773101715525,"caller":"x.go:9","msg":"Unhandled Error","err":"boom","list":[1,"a"]}`,
			wantBody: "Unhandled Error", sevNum: plog.SeverityNumberError, sevText: "ERROR",
			ts: time.UnixMilli(1773101715525).UTC(),
			attrs: map[string]any{
				"exception.message": "boom", "list": []any{int64(1), "a"},
				"code.file.path": "x.go", "code.line.number": int64(9), "otelcol_k8s.klog.format": "json",
			},
		},
		{
			name:     "partial text",
			body:     `W0310 00:00:01.000000 1 a.go:1] "m" a=1 b="open`,
			wantBody: "m", sevNum: plog.SeverityNumberWarn, sevText: "WARNING",
			ts: time.Date(2026, 3, 10, 0, 0, 1, 0, time.UTC),
			attrs: map[string]any{
				"a": int64(1), "thread.id": int64(1), "code.file.path": "a.go", "code.line.number": int64(1),
				"otelcol_k8s.klog.format": "text", "otelcol_k8s.klog.parse_error": "invalid value for key b", "otelcol_k8s.klog.unparsed": ` b="open`,
			},
		},
		{
			name:     "json disabled passes through",
			cfg:      func(c *Config) { c.Formats = []Format{"text"} },
			body:     `{"ts":1,"caller":"a.go:1","msg":"m"}`,
			wantBody: `{"ts":1,"caller":"a.go:1","msg":"m"}`,
			attrs:    map[string]any{},
		},
		{
			name:     "not klog",
			body:     "plain application output",
			wantBody: "plain application output",
			attrs:    map[string]any{},
		},
		{
			name:     "map body",
			body:     map[string]any{"a": "b"},
			wantBody: map[string]any{"a": "b"},
			attrs:    map[string]any{},
		},
		{
			name:     "zone",
			cfg:      func(c *Config) { c.Timezone = "Europe/Berlin" },
			body:     "I0310 01:00:00.000000 1 a.go:1] m",
			wantBody: "m", sevNum: plog.SeverityNumberInfo, sevText: "INFO",
			ts: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC),
			attrs: map[string]any{
				"thread.id": int64(1), "code.file.path": "a.go", "code.line.number": int64(1), "otelcol_k8s.klog.format": "text",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			if tt.cfg != nil {
				tt.cfg(cfg)
			}
			require.NoError(t, cfg.Validate())
			recs, _ := run(t, cfg, nil, tt.body)
			lr := recs[0]
			assert.Equal(t, tt.wantBody, lr.Body().AsRaw())
			assert.Equal(t, tt.sevNum, lr.SeverityNumber())
			assert.Equal(t, tt.sevText, lr.SeverityText())
			if tt.ts.IsZero() {
				assert.Zero(t, lr.Timestamp())
			} else {
				assert.Equal(t, tt.ts, lr.Timestamp().AsTime())
			}
			assert.Equal(t, tt.attrs, lr.Attributes().AsRaw())
		})
	}
}

func TestSourceAttribute(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.SourceAttribute = "log"
	line := `I0310 00:00:01.000000 1 a.go:1] "m" k="v"`
	recs, tel := run(t, cfg, func(lr plog.LogRecord, i int) {
		if i == 0 {
			lr.Attributes().PutStr("log", line)
		}
	}, "body0", "body1")
	assert.Equal(t, "m", recs[0].Body().Str())
	assert.Equal(t, line, recs[0].Attributes().AsRaw()["log"])
	assert.Equal(t, "v", recs[0].Attributes().AsRaw()["k"])
	assert.Equal(t, "body1", recs[1].Body().Str(), "record without the attribute passes through")
	assert.Equal(t, map[string]int64{"text": 1}, counter(t, tel, "processor_klog_parser_records_parsed"))
	assert.Equal(t, map[string]int64{"": 1}, counter(t, tel, "processor_klog_parser_records_not_klog"))
}

func TestYearFromPolicy(t *testing.T) {
	line := "I1231 23:59:59.000000 1 a.go:1] m"
	for _, tc := range []struct {
		yearFrom YearFrom
		ts       time.Time
		want     int
	}{
		{"auto", time.Date(2027, 1, 1, 0, 0, 1, 0, time.UTC), 2026},
		{"timestamp", time.Date(2031, 1, 1, 0, 0, 1, 0, time.UTC), 2030},
		{"observed_timestamp", time.Date(2031, 1, 1, 0, 0, 1, 0, time.UTC), 2025}, // observed is March 2026,
	} {
		cfg := createDefaultConfig().(*Config)
		cfg.YearFrom = tc.yearFrom
		recs, _ := run(t, cfg, func(lr plog.LogRecord, _ int) {
			lr.SetTimestamp(pcommon.NewTimestampFromTime(tc.ts))
		}, line)
		assert.Equal(t, tc.want, recs[0].Timestamp().AsTime().Year(), tc.yearFrom)
	}
}

func TestTelemetry(t *testing.T) {
	_, tel := run(t, createDefaultConfig().(*Config), nil,
		`I0310 00:00:01.000000 1 a.go:1] "m"`,
		`I0310 00:00:01.000000 1 a.go:1] "m" a=1 b=[`,
		`{"ts":1,"caller":"a.go:1","msg":"m"}`,
		`{"ts":1,"caller":"a.go:1","msg":"m","x":`,
		`{"level":"info","ts":1,"caller":"a.go:1","msg":"an application's zap line"}`,
		`I0310 00:00:01.000000 1 a.go:1] "m" k8s.pod.name="other" log.type="audit"`,
		"nope", int64(5),
	)
	assert.Equal(t, map[string]int64{"text": 3, "json": 2}, counter(t, tel, "processor_klog_parser_records_parsed"))
	assert.Equal(t, map[string]int64{"text": 1, "json": 1}, counter(t, tel, "processor_klog_parser_records_partial"))
	assert.Equal(t, map[string]int64{"": 3}, counter(t, tel, "processor_klog_parser_records_not_klog"))
	assert.Equal(t, map[string]int64{"": 2}, counter(t, tel, "processor_klog_parser_pairs_renamed"), "k8s.pod.name and log.type")
}

var _ processor.Factory = NewFactory()

func TestConcurrentBatches(t *testing.T) {
	sink := new(consumertest.LogsSink)
	p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), sink)
	require.NoError(t, err)
	lines := []string{
		`I0310 00:00:01.000000 1 a.go:1] "m" pod="ns/a" n=1`,
		`{"ts":1773101715525,"caller":"a.go:1","msg":"j","v":1,"pod":{"name":"a","namespace":"ns"}}`,
		"plain",
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				ld := plog.NewLogs()
				lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
				for _, l := range lines {
					lrs.AppendEmpty().Body().SetStr(l)
				}
				assert.NoError(t, p.ConsumeLogs(context.Background(), ld))
			}
		}()
	}
	wg.Wait()
	require.Len(t, sink.AllLogs(), 200)
	for _, ld := range sink.AllLogs() {
		lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		assert.Equal(t, "m", lrs.At(0).Body().Str())
		assert.Equal(t, "ns/a", lrs.At(0).Attributes().AsRaw()["pod"])
		assert.Equal(t, "j", lrs.At(1).Body().Str())
		assert.Equal(t, "plain", lrs.At(2).Body().Str())
	}
}

// TestLogContentNeverWritesReservedNames: a pair whose key is a resource identity or project
// name is written under otelcol_k8s.klog.pair.<key>; the header's attributes stay the header's.
func TestLogContentNeverWritesReservedNames(t *testing.T) {
	recs, _ := run(t, createDefaultConfig().(*Config), nil,
		`I0310 00:00:01.000000 1 a.go:1] "m" k8s.namespace.uid="other-tenant" otelcol_k8s.log.type="audit" thread.id=99 code.file.path="evil.go" pod="a/b"`)
	assert.Equal(t, map[string]any{
		"otelcol_k8s.klog.pair.k8s.namespace.uid":    "other-tenant",
		"otelcol_k8s.klog.pair.otelcol_k8s.log.type": "audit",
		"otelcol_k8s.klog.pair.thread.id":            int64(99),
		"otelcol_k8s.klog.pair.code.file.path":       "evil.go",
		"pod":                                        "a/b",
		"thread.id":                                  int64(1),
		"code.file.path":                             "a.go",
		"code.line.number":                           int64(1),
		"otelcol_k8s.klog.format":                    "text",
	}, recs[0].Attributes().AsRaw())
}

// TestZapFormat: zap lines are parsed only when configured; zapr's verbosities are DEBUG with
// the verbosity kept, and the level as written is the severity text.
func TestZapFormat(t *testing.T) {
	line := `{"level":"Level(-3)","ts":1773101715.5,"caller":"c/r.go:7","msg":"reconciling","controller":"web"}`
	recs, _ := run(t, createDefaultConfig().(*Config), nil, line)
	assert.Equal(t, line, recs[0].Body().Str(), "default formats leave zap lines alone")

	cfg := createDefaultConfig().(*Config)
	cfg.Formats = []Format{"text", "json", "zap"}
	recs, _ = run(t, cfg, nil, line, `{"level":"debug","ts":1773101715.5,"msg":"d"}`)
	assert.Equal(t, "reconciling", recs[0].Body().Str())
	assert.Equal(t, plog.SeverityNumberDebug, recs[0].SeverityNumber())
	assert.Equal(t, "Level(-3)", recs[0].SeverityText())
	assert.Equal(t, map[string]any{
		"controller": "web", "code.file.path": "c/r.go", "code.line.number": int64(7),
		"otelcol_k8s.klog.verbosity": int64(3), "otelcol_k8s.klog.format": "zap",
	}, recs[0].Attributes().AsRaw())
	assert.Equal(t, plog.SeverityNumberDebug, recs[1].SeverityNumber())
	assert.Equal(t, "debug", recs[1].SeverityText())
}

// A record with key/values leaves room for the attributes object_ref writes next for one
// object (five); adding them allocates only their values, the map does not grow. A record
// without key/values gets no spare room.
func TestRoomForAnObjectReference(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		puts       int
		wantAllocs float64
	}{
		{name: "key/values: five more fit", body: `I0310 12:00:00.000000       1 sched.go:10] "Bound" pod="default/web-1" node="n1"`, puts: 5, wantAllocs: 5},
		{name: "key/values: a sixth grows the map", body: `I0310 12:00:00.000000       1 sched.go:10] "Bound" pod="default/web-1" node="n1"`, puts: 6, wantAllocs: 7},
		{name: "no key/values: no room", body: `I0310 12:00:00.000000       1 sched.go:10] Bound the pod`, puts: 1, wantAllocs: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// AllocsPerRun calls its function twice (once to warm up): a fresh record each time.
			recs, _ := run(t, createDefaultConfig().(*Config), nil, tt.body, tt.body)
			require.Len(t, recs, 2)
			keys := []string{"a", "b", "c", "d", "e", "f"}[:tt.puts]
			next := 0
			allocs := testing.AllocsPerRun(1, func() {
				attrs := recs[next].Attributes()
				next++
				for _, k := range keys {
					attrs.PutStr(k, "v")
				}
			})
			assert.InDelta(t, tt.wantAllocs, allocs, 0)
		})
	}
}
