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
)

// spanBuilder turns transitions into spans, one per singleton and one per finished series
// (design.md rule 9), one ResourceSpans per Event namespace.
type spanBuilder struct {
	clusterName string
	mode        SpanMode
	// objectContext answers the regarding object's span context (nil: no trace_context).
	objectContext func(objref.Ref) (trace.SpanContext, bool)
	putRef        func(m pcommon.Map, set attr.ObjectSet, r objref.Ref) string
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

// eventTraceID is the trace of every span about one object: a hash of the object's identity,
// so a restart or another replica derives the same id.
func eventTraceID(r objref.Ref) pcommon.TraceID {
	sum := sha256.Sum256([]byte("otelcol_k8s trace\x00" + objectKey(r)))
	var id pcommon.TraceID
	copy(id[:], sum[:16])
	if id.IsEmpty() {
		id[15] = 1
	}
	return id
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
		b.span(spans.AppendEmpty(), tr)
		n++
	}
	return n
}

func (b *spanBuilder) span(sp ptrace.Span, tr *transition) {
	ev := &tr.Event
	ref := canonicalRef(ev.Regarding)
	sp.SetName(spanName(ev))
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetTraceID(eventTraceID(ref))
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
	if b.objectContext != nil {
		if sc, ok := b.objectContext(ref); ok {
			switch b.mode {
			case SpanModeLink:
				l := sp.Links().AppendEmpty()
				l.SetTraceID(pcommon.TraceID(sc.TraceID()))
				l.SetSpanID(pcommon.SpanID(sc.SpanID()))
				l.TraceState().FromRaw(sc.TraceState().String())
			default:
				sp.SetTraceID(pcommon.TraceID(sc.TraceID()))
				sp.SetParentSpanID(pcommon.SpanID(sc.SpanID()))
				sp.TraceState().FromRaw(sc.TraceState().String())
			}
		}
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
