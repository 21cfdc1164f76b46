// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"crypto/sha256"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objspans"
)

// spanBuilder turns transitions into spans, one per singleton and one per finished series
// (design.md rule 9), one ResourceSpans per Event namespace.
type spanBuilder struct {
	clusterName string
	mode        SpanMode
	sampling    objspans.SamplingConfig
	// objectContext answers the regarding object's span context (nil: no trace_context).
	objectContext func(objref.Ref) (objContext, bool)
	putRef        func(m pcommon.Map, set attr.ObjectSet, r objref.Ref) string
	// unsampled counts a span the sampling dropped, by reason.
	unsampled func(reason string)
}

// contextOf is the regarding object's context for a transition: the one captured when its
// series opened, else (a singleton, a series first seen finished, no trace_context when it
// opened) the one it carries now (design.md rule 9.6).
func contextOf(tr *transition, lookup func(objref.Ref) (objContext, bool)) (objContext, bool) {
	if tr.Context.read {
		return objContext{sc: tr.Context.sc, link: tr.Context.link}, tr.Context.sc.IsValid()
	}
	if lookup == nil {
		return objContext{}, false
	}
	return lookup(canonicalRef(tr.Event.Regarding))
}

// spanWorthy reports whether a transition ends an Event's span: a singleton, or a series that
// finished. start and ongoing records have no span of their own.
func spanWorthy(s state) bool { return s == stateSingleton || s == stateFinished }

// canonicalRef is the regarding object as the object model completes it (its apiVersion from
// the kind table, a Node uid equal to its name dropped), or as written when the model rejects it.
func canonicalRef(r objref.Ref) objref.Ref {
	c := r
	if objref.Canonicalize(&c) != objref.OK {
		return r
	}
	return c
}

// objectKey identifies the regarding object for the ids: its uid, else its key.
func objectKey(r objref.Ref) string {
	if r.UID != "" {
		return "uid:" + r.UID
	}
	return "key:" + r.Key()
}

// eventTrace is the trace and parent of an Event's span when the object carries no context
// (design.md rule 9.3, objspans rule 1): for a Pod, the trace of its lifecycle (its first
// desired state), under its root span; for any other object (Events carry no generation, and a
// Node's or a long-lived object's Events must not pile into one trace) a trace of the Event
// itself: the singleton and the series of one Event share it.
func eventTrace(r objref.Ref, eventUID string) (pcommon.TraceID, pcommon.SpanID) {
	if r.Kind == "Pod" && r.UID != "" {
		return objspans.TraceID(r.UID, 1), objspans.RootSpanID(r.UID, 1)
	}
	sum := sha256.Sum256([]byte("otelcol_k8s trace\x00" + objectKey(r) + "\x00" + eventUID))
	var id pcommon.TraceID
	copy(id[:], sum[:16])
	if id.IsEmpty() {
		id[15] = 1
	}
	return id, pcommon.SpanID{}
}

// eventSpanID is the span of one Event on its object covering its occurrences up to count: 1
// for the singleton span, the series' count at its finish for the series span (design.md rule
// 9.3). A singleton that later repeats and its series are so two spans with two ids, and a
// repeated export of either derives its id again.
func eventSpanID(r objref.Ref, eventUID string, count int32) pcommon.SpanID {
	sum := sha256.Sum256([]byte("otelcol_k8s span\x00" + objectKey(r) + "\x00" + eventUID + "\x00" + strconv.FormatInt(int64(count), 10)))
	var id pcommon.SpanID
	copy(id[:], sum[:8])
	if id.IsEmpty() {
		id[7] = 1
	}
	return id
}

// spanName is "<Kind>.<reason>", such as "Pod.BackOff".
func spanName(ev *event) string {
	kind := ev.Regarding.Kind
	if kind == "" {
		kind = "Object"
	}
	return kind + "." + ev.Reason
}

// build appends one span per span-worthy transition to traces; it returns how many.
func (b *spanBuilder) build(traces ptrace.Traces, ts []transition) int {
	bySpace := map[string]ptrace.SpanSlice{}
	n := 0
	for i := range ts {
		tr := &ts[i]
		if !spanWorthy(tr.State) {
			continue
		}
		ids, keep := b.decide(tr)
		if !keep {
			continue
		}
		ns := tr.Event.Namespace
		spans, ok := bySpace[ns]
		if !ok {
			rs := traces.ResourceSpans().AppendEmpty()
			putResource(rs.Resource().Attributes(), ns, b.clusterName)
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(scopeName)
			spans = ss.Spans()
			bySpace[ns] = spans
		}
		b.span(spans.AppendEmpty(), tr, ids)
		n++
	}
	return n
}

// spanIDs are the ids and relation of one Event's span.
type spanIDs struct {
	trace  pcommon.TraceID
	parent pcommon.SpanID
	link   trace.SpanContext // valid: link to it
	state  string            // the trace state of the parent context
}

// decide gives a span its trace, parent or link (rule 9.3, 9.6) and applies the sampling
// (objspans rule 2); false when the span is dropped (counted).
func (b *spanBuilder) decide(tr *transition) (spanIDs, bool) {
	ref := canonicalRef(tr.Event.Regarding)
	var out spanIDs
	out.trace, out.parent = eventTrace(ref, tr.Event.UID)
	c, ok := contextOf(tr, b.objectContext)
	if !ok {
		c = objContext{}
	}
	sc := c.sc
	switch {
	case sc.IsValid() && (b.mode == SpanModeLink || c.link): // a link context is linked in either mode
		out.parent = pcommon.SpanID{}
		if ref.Kind == "Pod" {
			out.parent = objspans.RootSpanID(ref.UID, 1) // the Pod's lifecycle root links alike
		}
		out.link = sc
	case sc.IsValid():
		out.trace, out.parent, out.state = pcommon.TraceID(sc.TraceID()), pcommon.SpanID(sc.SpanID()), sc.TraceState().String()
	}
	if d := b.sampling.Decide(ref.Kind, sc, out.trace); d != objspans.Sample {
		if b.unsampled != nil {
			b.unsampled(d.String())
		}
		return out, false
	}
	return out, true
}

func (b *spanBuilder) span(sp ptrace.Span, tr *transition, ids spanIDs) {
	ev := &tr.Event
	ref := canonicalRef(ev.Regarding)
	sp.SetName(spanName(ev))
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetTraceID(ids.trace)
	sp.SetParentSpanID(ids.parent)
	sp.TraceState().FromRaw(ids.state)
	covered := ev.Count
	if tr.State == stateSingleton {
		covered = 1
	}
	sp.SetSpanID(eventSpanID(ref, ev.UID, covered))
	start, end := ev.First, ev.Last
	if end.Before(start) {
		end = start
	}
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
	if ev.Type == "Warning" {
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(ev.Reason)
	}
	if ids.link.IsValid() {
		l := sp.Links().AppendEmpty()
		l.SetTraceID(pcommon.TraceID(ids.link.TraceID()))
		l.SetSpanID(pcommon.SpanID(ids.link.SpanID()))
		l.TraceState().FromRaw(ids.link.TraceState().String())
	}
	m := sp.Attributes()
	putEventAttributes(m, tr)
	putNonEmpty(m, attr.EventNote, ev.Note)
	// A rejected reference is counted once, by the log record of the same transition.
	b.putRef(m, attr.Subject, ev.Regarding)
	if ev.Related != nil {
		b.putRef(m, attr.Related, *ev.Related)
	}
}
