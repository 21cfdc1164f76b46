// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/trace"
)

// TraceContextSource is what the receiver needs from the extension named by trace_context: the
// span context a Kubernetes object carries. It uses only standard and OpenTelemetry API types,
// so an extension satisfies it without importing this module (object_ref asks the same).
// SpanContextForObject must answer from memory; ok is false when the object is unknown or
// carries no context.
type TraceContextSource interface {
	SpanContextForObject(ctx context.Context, apiVersion, kind, namespace, name, uid string) (sc trace.SpanContext, ok bool)
}

// findTraceContextSource returns the extension id names, checking it implements the interface.
func findTraceContextSource(host component.Host, id component.ID) (TraceContextSource, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("kube_events: trace_context: extension %q is not configured; add it to the service's extensions", id)
	}
	src, ok := ext.(TraceContextSource)
	if !ok {
		return nil, fmt.Errorf("kube_events: trace_context: extension %q (%T) does not implement "+
			"SpanContextForObject(ctx context.Context, apiVersion, kind, namespace, name, uid string) (trace.SpanContext, bool)", id, ext)
	}
	return src, nil
}
