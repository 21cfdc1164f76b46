// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/namefilter"
)

// TraceContextSource is what the processor needs from the extension named by trace_context:
// the W3C trace context a Kubernetes object carries (its trace.kubernetes.io/context
// annotation). Its method uses only standard and OpenTelemetry API types, so an extension
// satisfies it without importing this module.
//
// SpanContextForObject is called once per subject of a record, on the pipeline's goroutine, and
// must answer from memory: no API request per call. apiVersion is the reference's own or, when
// it states none, the kind table's (such as "apps/v1"); namespace is empty for cluster-scoped
// kinds; uid is empty when the log did not say. ok is false when the object is unknown or
// carries no trace context; the returned context must then be ignored.
type TraceContextSource interface {
	SpanContextForObject(ctx context.Context, apiVersion, kind, namespace, name, uid string) (sc trace.SpanContext, ok bool)
}

// TraceContextsHeld is an optional method of a TraceContextSource: false when it knows no object
// that carries a trace context (or has one through its owners), so that every look-up would
// answer "no". The processor asks once per batch and then skips the batch's look-ups: a cluster
// where nothing writes a context costs one call per batch, not one per record.
type TraceContextsHeld interface {
	TraceContextsHeld() bool
}

// TraceContextNames is an optional method of a TraceContextSource: a filter holding the name of
// every object SpanContextForObject may answer for. The processor asks about an object named
// without a uid only when the filter may contain its name, so that a record naming an object
// the source holds nothing for costs a hash and a bit instead of a call (most records, in a
// cluster where few objects carry a context). The filter lives as long as the source.
type TraceContextNames interface {
	TraceContextNames() *namefilter.Filter
}

// findTraceContextSource returns the extension id names, checking it implements the interface.
func findTraceContextSource(host component.Host, id component.ID) (TraceContextSource, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("trace_context: extension %q is not configured; add it to the service's extensions", id)
	}
	src, ok := ext.(TraceContextSource)
	if !ok {
		return nil, fmt.Errorf("trace_context: extension %q (%T) does not implement "+
			"SpanContextForObject(ctx context.Context, apiVersion, kind, namespace, name, uid string) (trace.SpanContext, bool)", id, ext)
	}
	return src, nil
}
