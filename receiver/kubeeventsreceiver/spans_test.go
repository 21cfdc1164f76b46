// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objspans"
)

var (
	spanT0  = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	webPod  = objref.Ref{Kind: "Pod", APIVersion: "v1", Namespace: "shop", Name: "web-0", UID: "0b8c1a8e-1111-4c43-9a55-1f0d2b0c7e01"}
	objSpan = trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0xaa, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		SpanID:     trace.SpanID{0xbb, 1, 2, 3, 4, 5, 6, 7},
		TraceFlags: trace.FlagsSampled,
	})
)

func backOffEvent(uid string, count int32, typ string) event {
	return event{
		UID: uid, Name: "web-0.1", Namespace: "shop", Type: typ, Reason: "BackOff", Action: "Restart",
		Note: "Back-off restarting failed container", ReportingController: "kubelet", ReportingInstance: "node-1",
		Regarding: webPod, Count: count, First: spanT0, Last: spanT0.Add(time.Duration(count-1) * 10 * time.Second),
	}
}

func spansOf(tr ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for i := 0; i < tr.ResourceSpans().Len(); i++ {
		ss := tr.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < ss.Len(); j++ {
			for k := 0; k < ss.At(j).Spans().Len(); k++ {
				out = append(out, ss.At(j).Spans().At(k))
			}
		}
	}
	return out
}

func TestSpans(t *testing.T) {
	// A Pod's Events without a context are in the Pod's lifecycle trace, under its root
	// (objspans rule 1): sha256("<pod uid>/1/root")[:16] and [16:24], computed outside Go; the
	// span ids are sha256("otelcol_k8s span\x00uid:<pod uid>\x00ev-1\x00<count>")[:8].
	const wantTrace, wantRoot = "2ec68c2e5d454478be05e5151b700132", "6e9a3a89d63a1da8"
	tests := []struct {
		name       string
		tr         transition
		mode       SpanMode
		objCtx     bool
		objLink    bool // the context was read from tracing.k8s.io/traceparent
		wantSpans  int
		wantSpan   string
		wantName   string
		wantStatus ptrace.StatusCode
		wantDur    time.Duration
		wantCount  int64
		wantParent bool
		wantLink   bool
	}{
		{
			name: "singleton: one instant span", tr: transition{State: stateSingleton, Event: backOffEvent("ev-1", 1, "Normal")},
			wantSpans: 1, wantSpan: "69770ead076e6cde", wantName: "Pod.BackOff", wantStatus: ptrace.StatusCodeUnset, wantCount: 1,
		},
		{name: "start: no span yet", tr: transition{State: stateStart, Event: backOffEvent("ev-1", 2, "Warning")}},
		{name: "ongoing: no span yet", tr: transition{State: stateOngoing, Event: backOffEvent("ev-1", 40, "Warning")}},
		{
			name: "finished: first to last occurrence, error for Warning", tr: transition{State: stateFinished, Event: backOffEvent("ev-1", 55, "Warning")},
			wantSpans: 1, wantSpan: "02f72ab018b3c9a8", wantName: "Pod.BackOff", wantStatus: ptrace.StatusCodeError, wantDur: 540 * time.Second, wantCount: 55,
		},
		{
			name: "parent mode: child of the object's context", tr: transition{State: stateFinished, Event: backOffEvent("ev-1", 3, "Warning")},
			mode: SpanModeParent, objCtx: true,
			wantSpans: 1, wantSpan: "a582ef7e0546ac15", wantName: "Pod.BackOff", wantStatus: ptrace.StatusCodeError, wantDur: 20 * time.Second, wantCount: 3, wantParent: true,
		},
		{
			name: "link mode: own trace, linked", tr: transition{State: stateSingleton, Event: backOffEvent("ev-1", 1, "Normal")},
			mode: SpanModeLink, objCtx: true, wantSpans: 1, wantSpan: "69770ead076e6cde", wantName: "Pod.BackOff", wantCount: 1, wantLink: true,
		},
		{
			name: "parent mode, a link context: linked, not parented", tr: transition{State: stateFinished, Event: backOffEvent("ev-1", 3, "Warning")},
			mode: SpanModeParent, objCtx: true, objLink: true,
			wantSpans: 1, wantSpan: "a582ef7e0546ac15", wantName: "Pod.BackOff", wantStatus: ptrace.StatusCodeError, wantDur: 20 * time.Second, wantCount: 3, wantLink: true,
		},
		{
			name: "link mode, a link context: linked", tr: transition{State: stateSingleton, Event: backOffEvent("ev-1", 1, "Normal")},
			mode: SpanModeLink, objCtx: true, objLink: true, wantSpans: 1, wantSpan: "69770ead076e6cde", wantName: "Pod.BackOff", wantCount: 1, wantLink: true,
		},
		{
			name: "parent mode, a captured link context: linked", tr: transition{State: stateSingleton, Event: backOffEvent("ev-1", 1, "Normal"), Context: capturedContext{sc: objSpan, link: true, read: true}},
			mode: SpanModeParent, wantSpans: 1, wantSpan: "69770ead076e6cde", wantName: "Pod.BackOff", wantCount: 1, wantLink: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := spanBuilder{clusterName: "prod", mode: tt.mode, putRef: putObjectRef, sampling: objspans.NewDefaultSamplingConfig()}
			if tt.objCtx {
				b.objectContext = func(r objref.Ref) (objContext, bool) {
					assert.Equal(t, webPod, r)
					return objContext{sc: objSpan, link: tt.objLink}, true
				}
			}
			traces := ptrace.NewTraces()
			require.Equal(t, tt.wantSpans, b.build(traces, []transition{tt.tr}))
			spans := spansOf(traces)
			require.Len(t, spans, tt.wantSpans)
			if tt.wantSpans == 0 {
				return
			}
			sp := spans[0]
			assert.Equal(t, tt.wantName, sp.Name())
			assert.Equal(t, tt.wantStatus, sp.Status().Code())
			assert.Equal(t, spanT0, sp.StartTimestamp().AsTime())
			assert.Equal(t, tt.wantDur, sp.EndTimestamp().AsTime().Sub(sp.StartTimestamp().AsTime()))
			assert.Equal(t, tt.wantSpan, sp.SpanID().String())
			switch {
			case tt.wantParent:
				assert.Equal(t, pcommon.TraceID(objSpan.TraceID()), sp.TraceID())
				assert.Equal(t, pcommon.SpanID(objSpan.SpanID()), sp.ParentSpanID())
				assert.Zero(t, sp.Links().Len())
			default:
				assert.Equal(t, wantTrace, sp.TraceID().String())
				assert.Equal(t, wantRoot, sp.ParentSpanID().String())
			}
			if tt.wantLink {
				require.Equal(t, 1, sp.Links().Len())
				assert.Equal(t, pcommon.TraceID(objSpan.TraceID()), sp.Links().At(0).TraceID())
				assert.Equal(t, pcommon.SpanID(objSpan.SpanID()), sp.Links().At(0).SpanID())
			}
			count, _ := sp.Attributes().Get(attr.EventCount)
			assert.Equal(t, tt.wantCount, count.Int())
			note, _ := sp.Attributes().Get(attr.EventNote)
			assert.Equal(t, "Back-off restarting failed container", note.Str())
			assert.Equal(t, "web-0", str2(sp.Attributes(), attr.ObjectName))
			assert.Equal(t, tt.tr.State.String(), str2(sp.Attributes(), attr.EventSeriesState))
			ns, _ := traces.ResourceSpans().At(0).Resource().Attributes().Get(attr.K8sNamespaceName)
			assert.Equal(t, "shop", ns.Str())
		})
	}
}

func str2(m pcommon.Map, k string) string {
	v, _ := m.Get(k)
	return v.AsString()
}

// TestSpanIDsAreDerived: the same Event gives the same ids in any builder (a restart, another
// replica); another Event on the object shares the trace, not the span; another object neither.
// A singleton that became a series and the series are two spans: no id is reused for another
// span (design.md rule 9.4), while a finished series exported again derives its id again.
func TestSpanIDsAreDerived(t *testing.T) {
	oneIn := func(st state, ev event) ptrace.Span {
		traces := ptrace.NewTraces()
		(&spanBuilder{putRef: putObjectRef, sampling: objspans.NewDefaultSamplingConfig()}).build(traces, []transition{{State: st, Event: ev}})
		return spansOf(traces)[0]
	}
	one := func(ev event) ptrace.Span { return oneIn(stateSingleton, ev) }
	a, again := one(backOffEvent("ev-1", 1, "Normal")), one(backOffEvent("ev-1", 1, "Normal"))
	assert.Equal(t, a.TraceID(), again.TraceID())
	assert.Equal(t, a.SpanID(), again.SpanID())
	b := one(backOffEvent("ev-2", 1, "Normal"))
	assert.Equal(t, a.TraceID(), b.TraceID())
	assert.NotEqual(t, a.SpanID(), b.SpanID())
	other := backOffEvent("ev-1", 1, "Normal")
	other.Regarding.UID = "0b8c1a8e-2222-4c43-9a55-1f0d2b0c7e01"
	c := one(other)
	assert.NotEqual(t, a.TraceID(), c.TraceID())
	assert.NotEqual(t, a.SpanID(), c.SpanID())
	// Without a uid the object's key identifies it.
	noUID := backOffEvent("ev-1", 1, "Normal")
	noUID.Regarding.UID = ""
	keyed, keyedAgain := one(noUID), one(noUID)
	assert.Equal(t, keyed.TraceID(), keyedAgain.TraceID())
	assert.NotEqual(t, a.TraceID(), keyed.TraceID())

	// The singleton, then its series: same trace, two spans.
	series := oneIn(stateFinished, backOffEvent("ev-1", 7, "Warning"))
	assert.Equal(t, a.TraceID(), series.TraceID())
	assert.NotEqual(t, a.SpanID(), series.SpanID())
	assert.Equal(t, series.SpanID(), oneIn(stateFinished, backOffEvent("ev-1", 7, "Warning")).SpanID())
	// A legacy series that started again after it finished: its second finish is another span.
	assert.NotEqual(t, series.SpanID(), oneIn(stateFinished, backOffEvent("ev-1", 12, "Warning")).SpanID())
}

// TestRecordsCarryTheObjectContext: with trace_context a record gets its regarding object's
// trace and span id; without a context it gets none.
func TestRecordsCarryTheObjectContext(t *testing.T) {
	for _, tt := range []struct {
		name      string
		has, link bool
		captured  bool
	}{
		{"object with a context", true, false, false},
		{"object without", false, false, false},
		// a link context is not the record's trace (design.md rule 9.6)
		{"object with a link context", true, true, false},
		{"a series that captured a link context", true, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := recordBuilder{
				putRef: putObjectRef, rejected: func(string, string) {},
				objectContext: func(objref.Ref) (objContext, bool) { return objContext{sc: objSpan, link: tt.link}, tt.has },
			}
			tr := transition{State: stateSingleton, Event: backOffEvent("ev-1", 1, "Normal")}
			if tt.captured {
				b.objectContext = nil
				tr.Context = capturedContext{sc: objSpan, link: tt.link, read: true}
			}
			logs := plog.NewLogs()
			b.build(logs, []transition{tr}, spanT0)
			lr := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			if !tt.has || tt.link {
				assert.True(t, lr.TraceID().IsEmpty())
				assert.True(t, lr.SpanID().IsEmpty())
				return
			}
			assert.Equal(t, pcommon.TraceID(objSpan.TraceID()), lr.TraceID())
			assert.Equal(t, pcommon.SpanID(objSpan.SpanID()), lr.SpanID())
			assert.True(t, lr.Flags().IsSampled())
		})
	}
}

// TestEventTraces: a Node's Events (and any non-Pod object's) are each in a trace of their own,
// never one trace per object forever; a Pod's Events share its lifecycle trace (objspans rule
// 1); a series' context is the one captured when it opened, not the one its object carries when
// it finishes (rule 9.6).
func TestEventTraces(t *testing.T) {
	b := spanBuilder{putRef: putObjectRef, sampling: objspans.NewDefaultSamplingConfig()}
	build := func(tr transition) ptrace.Span {
		traces := ptrace.NewTraces()
		require.Equal(t, 1, b.build(traces, []transition{tr}))
		return spansOf(traces)[0]
	}
	node := objref.Ref{Kind: "Node", APIVersion: "v1", Name: "node-1", UID: "6a0c3f9e-0000-4000-8000-000000000001"}
	onNode := func(uid string) event { ev := backOffEvent(uid, 1, "Normal"); ev.Regarding = node; return ev }
	n1, n2 := build(transition{State: stateSingleton, Event: onNode("ev-1")}), build(transition{State: stateSingleton, Event: onNode("ev-2")})
	assert.NotEqual(t, n1.TraceID(), n2.TraceID(), "two Events of a Node")
	assert.True(t, n1.ParentSpanID().IsEmpty())
	assert.Equal(t, n1.TraceID(), build(transition{State: stateFinished, Event: func() event { ev := onNode("ev-1"); ev.Count = 3; return ev }()}).TraceID(),
		"the singleton and the series of one Event")

	pod := build(transition{State: stateSingleton, Event: backOffEvent("ev-1", 1, "Normal")})
	assert.Equal(t, objspans.TraceID(webPod.UID, 0), pod.TraceID())
	assert.Equal(t, objspans.RootSpanID(webPod.UID, 1), pod.ParentSpanID())

	// captured when the series opened: the object's context has since been replaced
	b.objectContext = func(objref.Ref) (objContext, bool) {
		return objContext{sc: objSpan.WithTraceID(trace.TraceID{0xcc, 1})}, true
	}
	sp := build(transition{State: stateFinished, Event: backOffEvent("ev-1", 3, "Warning"), Context: capturedContext{sc: objSpan, read: true}})
	assert.Equal(t, pcommon.TraceID(objSpan.TraceID()), sp.TraceID())
	// captured as none: the series began before the object had a context
	sp = build(transition{State: stateFinished, Event: backOffEvent("ev-1", 3, "Warning"), Context: capturedContext{read: true}})
	assert.Equal(t, objspans.TraceID(webPod.UID, 1), sp.TraceID())
	// not captured (a singleton): read now
	sp = build(transition{State: stateSingleton, Event: backOffEvent("ev-1", 1, "Normal")})
	assert.Equal(t, pcommon.TraceID{0xcc, 1}, sp.TraceID())
}

// TestEventSpanSampling: an unsampled context gives no span, whatever the mode; only_with_context
// drops the spans of objects without one; each drop is counted by reason.
func TestEventSpanSampling(t *testing.T) {
	unsampled := objSpan.WithTraceFlags(0)
	tests := []struct {
		name     string
		mode     SpanMode
		sampling objspans.SamplingConfig
		sc       trace.SpanContext
		want     int
		reason   string
	}{
		{"unsampled parent", SpanModeParent, objspans.NewDefaultSamplingConfig(), unsampled, 0, "unsampled_parent"},
		{"unsampled link", SpanModeLink, objspans.NewDefaultSamplingConfig(), unsampled, 0, "unsampled_parent"},
		{"sampled parent, ratio 0", SpanModeParent, objspans.SamplingConfig{}, objSpan, 1, ""},
		{"no context, only_with_context", SpanModeParent, objspans.SamplingConfig{Ratio: 1, OnlyWithContext: true}, trace.SpanContext{}, 0, "no_context"},
		{"no context, Pods at ratio 0", SpanModeParent, objspans.SamplingConfig{Ratio: 1, Kinds: map[string]float64{"Pod": 0}}, trace.SpanContext{}, 0, "ratio"},
		{"no context, kept", SpanModeParent, objspans.NewDefaultSamplingConfig(), trace.SpanContext{}, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reasons []string
			b := spanBuilder{putRef: putObjectRef, mode: tt.mode, sampling: tt.sampling, unsampled: func(r string) { reasons = append(reasons, r) }}
			tr := transition{State: stateSingleton, Event: backOffEvent("ev-1", 1, "Normal"), Context: capturedContext{sc: tt.sc, read: true}}
			assert.Equal(t, tt.want, b.build(ptrace.NewTraces(), []transition{tr}))
			if tt.reason == "" {
				assert.Empty(t, reasons)
			} else {
				assert.Equal(t, []string{tt.reason}, reasons)
			}
		})
	}
}
