// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// recordBuilder turns transitions into log records, one ResourceLogs per Event namespace.
type recordBuilder struct {
	clusterName string
	// putRef writes an object reference through the shared object model and returns the
	// model's verdict ("" when accepted).
	putRef func(m pcommon.Map, set attr.ObjectSet, r objref.Ref) string
	// rejected is called for every reference the model rejects.
	rejected func(role, reason string)
	// objectContext answers the regarding object's span context (nil: no trace_context); a
	// record gets the trace and span id of its regarding object's context.
	objectContext func(objref.Ref) (objContext, bool)
}

// severity maps an Event's type (design.md rule 10; core/v1 does not validate types, so
// writers use others): the type itself is always the severity text.
func severity(eventType string) (plog.SeverityNumber, string) {
	switch eventType {
	case "Normal":
		return plog.SeverityNumberInfo, eventType
	case "Warning":
		return plog.SeverityNumberWarn, eventType
	case "Error":
		return plog.SeverityNumberError, eventType
	case "Critical", "Fatal":
		return plog.SeverityNumberFatal, eventType
	}
	return plog.SeverityNumberUnspecified, eventType
}

func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// build appends one record per transition to logs.
func (b *recordBuilder) build(logs plog.Logs, ts []transition, observed time.Time) {
	byNamespace := map[string]plog.LogRecordSlice{}
	for i := range ts {
		tr := &ts[i]
		ns := tr.Event.Namespace
		records, ok := byNamespace[ns]
		if !ok {
			rl := logs.ResourceLogs().AppendEmpty()
			putResource(rl.Resource().Attributes(), ns, b.clusterName)
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(scopeName)
			records = sl.LogRecords()
			byNamespace[ns] = records
		}
		b.record(records.AppendEmpty(), tr, observed)
	}
}

// recordAttributes is the most attributes record writes besides the objects': the Event's own
// (putEventAttributes), its first and last observed times and the series rate.
const recordAttributes = 13

// objectAttributes is the most attributes objref.Put writes for one object.
const objectAttributes = 7

func (b *recordBuilder) record(lr plog.LogRecord, tr *transition, observed time.Time) {
	ev := &tr.Event
	lr.SetEventName(attr.EventRecordName)
	lr.SetTimestamp(pcommon.NewTimestampFromTime(ev.Last))
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(observed))
	num, text := severity(ev.Type)
	lr.SetSeverityNumber(num)
	lr.SetSeverityText(text)
	lr.Body().SetStr(ev.Note)
	m := lr.Attributes()
	objects := 1
	if ev.Related != nil {
		objects++
	}
	m.EnsureCapacity(recordAttributes + objects*objectAttributes) // one allocation, not six growths
	putEventAttributes(m, tr)
	putNonEmpty(m, attr.EventFirstObserved, timeString(ev.First))
	putNonEmpty(m, attr.EventLastObserved, timeString(ev.Last))
	if rate, ok := seriesRate(tr); ok {
		m.PutDouble(attr.EventSeriesRate, rate)
	}
	if reason := b.putRef(m, attr.Subject, ev.Regarding); reason != "" {
		b.rejected("regarding", reason)
	}
	if ev.Related != nil {
		if reason := b.putRef(m, attr.Related, *ev.Related); reason != "" {
			b.rejected("related", reason)
		}
	}
	// A link context is not the record's trace (design.md rule 9.6): the Event's work is a trace of
	// its own that links to it, and a log record has no link.
	if c, ok := contextOf(tr, b.objectContext); ok && !c.link {
		sc := c.sc
		lr.SetTraceID(pcommon.TraceID(sc.TraceID()))
		lr.SetSpanID(pcommon.SpanID(sc.SpanID()))
		lr.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(sc.IsSampled()))
	}
}

// seriesRate is the occurrences per second since the series' previous record.
func seriesRate(tr *transition) (float64, bool) {
	if tr.State != stateOngoing && tr.State != stateFinished || tr.PrevCount == 0 {
		return 0, false
	}
	span := tr.Event.Last.Sub(tr.PrevLast).Seconds()
	if span <= 0 || tr.Event.Count < tr.PrevCount {
		return 0, false
	}
	return float64(tr.Event.Count-tr.PrevCount) / span, true
}

// putResource writes the resource attributes of an Event's records and spans.
func putResource(res pcommon.Map, namespace, clusterName string) {
	if namespace != "" {
		res.PutStr(attr.K8sNamespaceName, namespace)
	}
	if clusterName != "" {
		res.PutStr(attr.K8sClusterName, clusterName)
	}
}

// putEventAttributes writes the Event's own attributes, shared by records and spans.
func putEventAttributes(m pcommon.Map, tr *transition) {
	ev := &tr.Event
	putNonEmpty(m, attr.EventReason, ev.Reason)
	putNonEmpty(m, attr.EventAction, ev.Action)
	putNonEmpty(m, attr.EventType, ev.Type)
	putNonEmpty(m, attr.EventReportingController, ev.ReportingController)
	putNonEmpty(m, attr.EventReportingInstance, ev.ReportingInstance)
	putNonEmpty(m, attr.EventUID, ev.UID)
	putNonEmpty(m, attr.EventName, ev.Name)
	m.PutInt(attr.EventCount, int64(ev.Count))
	m.PutStr(attr.EventSeriesState, tr.State.String())
	if ev.Legacy {
		m.PutBool(attr.EventLegacy, true)
	}
}

func putNonEmpty(m pcommon.Map, k, v string) {
	if v != "" {
		m.PutStr(k, v)
	}
}
