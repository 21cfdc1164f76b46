// SPDX-License-Identifier: Apache-2.0

package objectref

import (
	"context"
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/trace"
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

// TraceContextKinds is an optional method of a TraceContextSource: the kinds (as references
// name them, such as "Pod") of which it can hold a context. The processor asks it once at start
// and then looks up only objects of those kinds: most records also name a Node or a Namespace,
// which need no call.
type TraceContextKinds interface {
	TraceContextKinds() []string
}

// kindSet is a small set of kind names, tested by length first.
type kindSet struct {
	lens  uint64 // bit n: some kind is n bytes long
	kinds []string
}

func newKindSet(kinds []string) *kindSet {
	s := &kindSet{}
	for _, k := range kinds {
		if len(k) >= 64 {
			s.lens |= 1 << 63 // the loop decides for every long name
		} else {
			s.lens |= 1 << len(k)
		}
		s.kinds = append(s.kinds, k)
	}
	return s
}

// has reports whether kind is in the set.
func (s *kindSet) has(kind string) bool {
	n := min(len(kind), 63)
	return s.lens&(1<<n) != 0 && slices.Contains(s.kinds, kind)
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
