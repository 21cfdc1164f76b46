// SPDX-License-Identifier: Apache-2.0

package klogparserprocessor

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	jsonlog "k8s.io/component-base/logs/json"
	"k8s.io/klog/v2"
)

type object struct{ name, namespace string }

func (o object) GetName() string      { return o.name }
func (o object) GetNamespace() string { return o.namespace }

// TestRealLoggersIntoPdata writes records with the real klog text logger and the real
// component-base JSON logger and checks the attributes the processor stores, in particular
// the object references object_ref reads: strings "ns/name" from text, maps from JSON.
func TestRealLoggersIntoPdata(t *testing.T) {
	fs := flag.NewFlagSet("klog", flag.PanicOnError)
	klog.InitFlags(fs)
	require.NoError(t, fs.Set("logtostderr", "false"))
	require.NoError(t, fs.Set("one_output", "true"))
	require.NoError(t, fs.Set("stderrthreshold", "FATAL"))
	var buf bytes.Buffer
	klog.SetOutput(&buf)
	defer klog.SetOutput(os.Stderr)

	log := func() {
		klog.ErrorS(errors.New("connection refused"), "Failed to sync", "pod", klog.KObj(object{"kubedns", "kube-system"}),
			"node", klog.KObj(object{"ip-10-0-1-23", ""}), "attempt", 3, "ratio", 0.25, "ready", false,
			"latency", 1500*time.Millisecond, "yaml", "a: 1\nb: 2\n")
	}

	log()
	text := buf.String()
	buf.Reset()
	logger, _ := jsonlog.NewJSONLogger(0, jsonlog.AddNopSync(&buf), nil, nil)
	klog.SetLogger(logger)
	log()
	klog.ClearLogger()
	js := buf.String()

	recs, tel := run(t, createDefaultConfig().(*Config), func(lr plog.LogRecord, _ int) {
		lr.SetObservedTimestamp(0) // year from "now", the time the lines were written
	}, text, js)
	assert.Equal(t, map[string]int64{"text": 1, "json": 1}, counter(t, tel, "processor_klog_parser_records_parsed"))
	common := map[string]any{
		"exception.message": "connection refused", "attempt": int64(3), "ratio": 0.25, "ready": false,
		"latency": "1.5s", "code.file.path": "reallogger_test.go",
	}
	wantText := map[string]any{
		"pod": "kube-system/kubedns", "node": "ip-10-0-1-23", "yaml": "a: 1\nb: 2", "otelcol_k8s.klog.format": "text",
	}
	wantJSON := map[string]any{
		"pod":  map[string]any{"name": "kubedns", "namespace": "kube-system"},
		"node": map[string]any{"name": "ip-10-0-1-23"}, "yaml": "a: 1\nb: 2\n", "otelcol_k8s.klog.format": "json",
	}
	for i, want := range []map[string]any{wantText, wantJSON} {
		lr := recs[i]
		assert.Equal(t, "Failed to sync", lr.Body().Str())
		assert.Equal(t, plog.SeverityNumberError, lr.SeverityNumber())
		assert.WithinDuration(t, time.Now(), lr.Timestamp().AsTime(), time.Minute)
		got := lr.Attributes().AsRaw()
		assert.Positive(t, got["code.line.number"])
		delete(got, "code.line.number")
		delete(got, "thread.id")
		if i == 1 {
			got["code.file.path"] = "reallogger_test.go" // JSON caller carries the package directory
			assert.Equal(t, "klogparserprocessor/reallogger_test.go", lr.Attributes().AsRaw()["code.file.path"])
		}
		for k, v := range common {
			want[k] = v
		}
		assert.Equal(t, want, got, "record %d", i)
	}
}
