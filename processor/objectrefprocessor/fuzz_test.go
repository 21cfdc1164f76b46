// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-k8s/otelcol-k8s/processor/objectrefprocessor/internal/metadata"
)

// FuzzProcessIdempotent runs records with arbitrary reference values through the processor
// twice: it must never fail or panic, and the second pass must change nothing (the canonical
// form is a fixed point, and rejected references stay as they were).
func FuzzProcessIdempotent(f *testing.F) {
	f.Add("kubedns", "kube-system", "ns/x", "ReplicaSet", `{"kind":"Pod","name":"a","namespace":"b","uid":"u"}`, false)
	f.Add("kube-system/kubedns", "", "x", "Node", `{"name":"n","namespace":""}`, true)
	f.Add(`{"name":"a","namespace":"b"}`, "Bad NS", "/x", "", `{"kind":"Node","name":1}`, false)
	f.Add("a/b/c", "default", `{"kind":"Pod","name":"p","apiVersion":"v1","fieldPath":"x"}`, "Pod", `[]`, true)
	f.Add("kubedns", "kube-system", `["a/b",null]`, "Service", `{"kind":"Service","name":"k:https","namespace":"d"}`, false)
	f.Fuzz(func(t *testing.T, pod, namespace, object, kind, regarding string, mapForm bool) {
		cfg := &Config{Form: FormString, Match: MatchConfig{All: true}}
		if mapForm {
			cfg.Form = FormMap
		}
		sink := new(consumertest.LogsSink)
		p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		ld := plog.NewLogs()
		attrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Attributes()
		attrs.PutStr("pod", pod)
		attrs.PutStr("namespace", namespace)
		attrs.PutStr("object", object)
		attrs.PutStr("kind", kind)
		attrs.PutStr("pods", object)
		attrs.PutStr("portName", pod)
		var raw map[string]any
		if json.Unmarshal([]byte(regarding), &raw) == nil && raw != nil {
			if err := attrs.PutEmptyMap("regarding").FromRaw(raw); err != nil {
				t.Skip()
			}
		} else {
			attrs.PutStr("regarding", regarding)
		}
		if err := p.ConsumeLogs(context.Background(), ld); err != nil {
			t.Fatal(err)
		}
		once := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw()
		if err := p.ConsumeLogs(context.Background(), sink.AllLogs()[0]); err != nil {
			t.Fatal(err)
		}
		twice := sink.AllLogs()[1].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw()
		a, _ := json.Marshal(once)
		b, _ := json.Marshal(twice)
		if string(a) != string(b) {
			t.Fatalf("second pass changed the record:\n once  %s\n twice %s", a, b)
		}
	})
}
