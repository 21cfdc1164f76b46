// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// Trace correlation (design.md section 6).

// correlate gives the record the trace context of the first object it names that has one: the
// subject first, then the others in key-table order.
func (p *refProcessor) correlate(ctx context.Context, lr plog.LogRecord, w *work, subject int, c *counts) {
	try := func(r *objref.Ref) bool {
		if p.names != nil && r.UID == "" && !p.names.MayContain(r.Kind, r.Name) {
			return false // the source holds nothing of that name
		}
		sc, link, ok := p.source.SpanContextForObject(ctx, r.APIVersion, r.Kind, r.Namespace, r.Name, r.UID)
		if !ok || link || !sc.HasTraceID() || !sc.HasSpanID() {
			return false // a link is not the record's trace (design.md section 6)
		}
		setContext(lr, sc)
		c.correlated++
		return true
	}
	if subject >= 0 && try(&w.refs[subject].ref) {
		return
	}
	for i := range w.refs {
		if i != subject && w.refs[i].ref.Kind != "" && try(&w.refs[i].ref) {
			return
		}
	}
}

// setContext gives the record the trace and span ids and the sampled flag of sc.
func setContext(lr plog.LogRecord, sc trace.SpanContext) {
	lr.SetTraceID(pcommon.TraceID(sc.TraceID()))
	lr.SetSpanID(pcommon.SpanID(sc.SpanID()))
	lr.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(sc.IsSampled()))
}

// podContext returns the trace context of the Pod a resource names (own_pod): by its uid, else
// by its namespace and name; invalid when it has none.
func (p *refProcessor) podContext(ctx context.Context, res pcommon.Map) trace.SpanContext {
	str := func(key string) string {
		if v, ok := res.Get(key); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
		return ""
	}
	uid, ns, name := str(attr.K8sPodUID), str(attr.K8sNamespaceName), str(attr.K8sPodName)
	if uid == "" && (ns == "" || name == "") {
		return trace.SpanContext{}
	}
	if uid == "" && p.names != nil && !p.names.MayContain("Pod", name) {
		return trace.SpanContext{}
	}
	sc, link, ok := p.source.SpanContextForObject(ctx, "v1", "Pod", ns, name, uid)
	if !ok || link || !sc.HasTraceID() || !sc.HasSpanID() {
		return trace.SpanContext{}
	}
	return sc
}
