// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	eventsv1 "k8s.io/api/events/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// FuzzEventToRecord decodes arbitrary JSON as an events.k8s.io/v1 Event (as a hostile or broken
// writer could create it), runs it through the series table, the record and the span mapping,
// and checks that nothing panics, that every record and span is well formed (spans: ids set,
// no two with one span id, end not before start), and that only registered attribute names are
// written.
func FuzzEventToRecord(f *testing.F) {
	f.Add(`{"metadata":{"name":"a","namespace":"ns","uid":"u1"},"eventTime":"2026-11-23T10:00:00.000000Z","reason":"BackOff","type":"Warning","regarding":{"kind":"Pod","name":"web-0","namespace":"ns","uid":"p1"},"note":"x"}`, int64(0))
	f.Add(`{"metadata":{"name":"b","uid":"u2"},"series":{"count":5,"lastObservedTime":"2026-11-23T09:00:00.000000Z"},"regarding":{"kind":"Node","name":"n1","uid":"n1"},"related":{"kind":"Pod","name":"../x"}}`, int64(600))
	f.Add(`{"metadata":{"name":"c","uid":"u3"},"deprecatedCount":-3,"deprecatedSource":{"component":"kubelet","host":"h"},"deprecatedFirstTimestamp":"2030-01-01T00:00:00Z","deprecatedLastTimestamp":"2000-01-01T00:00:00Z","type":"Odd"}`, int64(-1))
	f.Fuzz(func(t *testing.T, doc string, ageSeconds int64) {
		var e eventsv1.Event
		if json.Unmarshal([]byte(doc), &e) != nil {
			return
		}
		ev := fromEventsV1(&e)
		if ev.Count < 1 {
			t.Fatalf("count %d below 1", ev.Count)
		}
		if !ev.First.IsZero() && !ev.Last.IsZero() && ev.First.After(ev.Last) {
			t.Fatalf("first %s after last %s", ev.First, ev.Last)
		}
		now := ev.Last.Add(time.Duration(ageSeconds) * time.Second)
		tab := newSeriesTable(testTimers())
		ts := tab.observe(ev, now, true, true)
		ts = append(ts, tab.observe(ev, now, false, false)...)
		ts = append(ts, tab.sweep(now.Add(24*time.Hour))...)
		b := recordBuilder{putRef: putObjectRef, rejected: func(string, string) {}}
		logs := plog.NewLogs()
		b.build(logs, ts, now)
		if logs.LogRecordCount() != len(ts) {
			t.Fatalf("%d records for %d transitions", logs.LogRecordCount(), len(ts))
		}
		traces := ptrace.NewTraces()
		n := (&spanBuilder{putRef: putObjectRef}).build(traces, ts)
		ids := map[pcommon.SpanID]bool{}
		for _, sp := range spansOf(traces) {
			if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() || ids[sp.SpanID()] {
				t.Fatalf("span %q: trace %s span %s (seen: %v)", sp.Name(), sp.TraceID(), sp.SpanID(), ids[sp.SpanID()])
			}
			ids[sp.SpanID()] = true
			if sp.EndTimestamp() < sp.StartTimestamp() {
				t.Fatalf("span %q ends before it starts", sp.Name())
			}
			sp.Attributes().Range(func(k string, _ pcommon.Value) bool {
				if !attr.Registered(k) {
					t.Fatalf("unregistered span attribute %q", k)
				}
				return true
			})
		}
		if n != len(spansOf(traces)) {
			t.Fatalf("build reported %d spans, made %d", n, len(spansOf(traces)))
		}
		for i := 0; i < logs.ResourceLogs().Len(); i++ {
			lrs := logs.ResourceLogs().At(i).ScopeLogs().At(0).LogRecords()
			for j := 0; j < lrs.Len(); j++ {
				lrs.At(j).Attributes().Range(func(k string, _ pcommon.Value) bool {
					if !attr.Registered(k) {
						t.Fatalf("unregistered attribute %q", k)
					}
					return true
				})
			}
		}
	})
}
