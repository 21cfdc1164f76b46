// SPDX-License-Identifier: Apache-2.0

// Package tracesource is the one contract between the extension that knows which span context a
// Kubernetes object carries (trace_context) and the components that ask it (object_ref,
// kube_events, kube_lifecycle), and the one way those components find it among the collector's
// extensions. Its methods use only standard and OpenTelemetry API types, so an extension
// satisfies it without importing this package.
package tracesource

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/namefilter"
)

// Source answers "which span context does this object carry, or its nearest controller owner
// that carries one?".
//
// SpanContextForObject is called on a pipeline's or a watch's goroutine and must answer from
// memory: no API request per call. apiVersion is the reference's own or, when it states none,
// the kind's usual one (such as "apps/v1"); namespace is empty for cluster-scoped kinds; uid is
// empty when the caller does not know it. ok is false when the object is unknown or carries no
// trace context; the returned context must then be ignored.
//
// link says how the context relates to the object's work, as the annotation it was read from
// says (pkg/objecttrace's Scheme): false for trace.kubernetes.io/context (the object-lifecycle
// proposal: the work continues that trace, so spans are parented under it and log records
// carry its trace id), true for tracing.k8s.io/traceparent (the asynchronous propagation
// proposal: the work is a trace of its own that links to it, so spans link to it and a log
// record does not take its trace id). An object without a context of its own inherits its
// owner's context with the owner's relation.
type Source interface {
	SpanContextForObject(ctx context.Context, apiVersion, kind, namespace, name, uid string) (sc trace.SpanContext, link, ok bool)
}

// Held is an optional method of a Source: false when it knows no object that carries a trace
// context (or has one through its owners), so that every look-up would answer "no". A caller
// with many look-ups to make (a batch of records) asks once and skips them all.
type Held interface {
	TraceContextsHeld() bool
}

// Names is an optional method of a Source: a filter holding the name of every object
// SpanContextForObject may answer for. A caller asks about an object only when the filter may
// contain its name, so that a look-up of an object the source holds nothing for costs a hash
// and a bit instead of a call. The filter lives as long as the source.
type Names interface {
	TraceContextNames() *namefilter.Filter
}

// Fetcher is an optional method of a Source that learns objects on demand instead of watching
// them (trace_context's lookup mode, the events collector's): it may read the object and its
// owners from the API server when it holds nothing fresh about them, and so may block, bounded
// by ctx. It answers as SpanContextForObject. A caller that is not on a hot path and sees each
// object rarely (kube_events, once per Event series) asks it; a caller per log record never
// does.
type Fetcher interface {
	FetchSpanContextForObject(ctx context.Context, apiVersion, kind, namespace, name, uid string) (sc trace.SpanContext, link, ok bool)
}

// Trust is an optional method of a Source: whether a context that an object of kind in
// namespace carries itself is used (the source's trust configuration: trace_context's
// trust.namespaces and trust.kinds). A component that reads an object's annotations itself
// rather than asking the source (kube_lifecycle reads the Pods and Deployments it traces) asks
// Trusted, so that one trust decision applies to every context the collector joins.
type Trust interface {
	TrustsContext(kind, namespace string) bool
}

// Trusted reports whether src trusts a context on an object of kind in namespace: true when
// src is nil (no trace_context configured: nothing to apply) or has no Trust method.
func Trusted(src Source, kind, namespace string) bool {
	t, ok := src.(Trust)
	return !ok || t.TrustsContext(kind, namespace)
}

// Find returns the extension id names as a Source. who names the asking component and its
// configuration key in the errors ("kube_events: trace_context").
func Find(host component.Host, id component.ID, who string) (Source, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("%s: extension %q is not configured; add it to the service's extensions", who, id)
	}
	src, ok := ext.(Source)
	if !ok {
		return nil, fmt.Errorf("%s: extension %q (%T) does not implement "+
			"SpanContextForObject(ctx context.Context, apiVersion, kind, namespace, name, uid string) (trace.SpanContext, bool, bool)", who, id, ext)
	}
	return src, nil
}
