// SPDX-License-Identifier: Apache-2.0

package objecttrace

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/trace"
)

// Annotation keys.
const (
	// ContextAnnotation is the object-lifecycle tracing proposal's annotation: one value, a W3C
	// traceparent or the webhook's base64 binary span context.
	ContextAnnotation = "trace.kubernetes.io/context"
	// TraceparentAnnotation and TracestateAnnotation are the asynchronous propagation
	// proposal's annotations, W3C traceparent and tracestate values.
	TraceparentAnnotation = "tracing.k8s.io/traceparent"
	TracestateAnnotation  = "tracing.k8s.io/tracestate"
	// CarrierPrefix is the prefix AnnotationCarrier puts before a propagator's field names.
	CarrierPrefix = "tracing.k8s.io/"
)

// Object is what the package needs of a Kubernetes object; every metav1.Object has it.
type Object interface {
	GetAnnotations() map[string]string
	SetAnnotations(map[string]string)
}

// Scheme says which annotations hold an object's span context.
type Scheme uint8

// Schemes.
const (
	// SchemeNone: the object carries no span context.
	SchemeNone Scheme = iota
	// SchemeContext: ContextAnnotation.
	SchemeContext
	// SchemeTraceparent: TraceparentAnnotation (and TracestateAnnotation).
	SchemeTraceparent
)

// String returns the scheme's annotation key.
func (s Scheme) String() string {
	switch s {
	case SchemeContext:
		return ContextAnnotation
	case SchemeTraceparent:
		return TraceparentAnnotation
	default:
		return "none"
	}
}

// Encoding is the form EncodeContextIntoObject writes ContextAnnotation in.
type Encoding uint8

// Encodings.
const (
	// EncodingTraceparent writes a W3C traceparent (the default).
	EncodingTraceparent Encoding = iota
	// EncodingBinary writes the webhook's base64 binary span context, for readers that know
	// only that form.
	EncodingBinary
)

// SpanContextFromAnnotations returns the span context stored in annotations and the scheme it
// was found under. ContextAnnotation is read first, then TraceparentAnnotation; a key whose
// value does not decode is passed over. With no valid context the scheme is SchemeNone and
// err says why the first key present did not decode (wrapping ErrMalformed or ErrInvalidIDs),
// or is nil when no key is present.
func SpanContextFromAnnotations(annotations map[string]string) (sc trace.SpanContext, scheme Scheme, err error) {
	if v, found := annotations[ContextAnnotation]; found {
		sc, err = DecodeContextValue(v)
		if err == nil {
			return sc, SchemeContext, nil
		}
		err = fmt.Errorf("%s: %w", ContextAnnotation, err)
	}
	if v, found := annotations[TraceparentAnnotation]; found {
		sc, perr := ParseTraceparent(v, annotations[TracestateAnnotation])
		if perr == nil {
			return sc, SchemeTraceparent, nil
		}
		if err == nil {
			err = fmt.Errorf("%s: %w", TraceparentAnnotation, perr)
		}
	}
	return trace.SpanContext{}, SchemeNone, err
}

// SpanContextFromObject is SpanContextFromAnnotations on obj's annotations.
func SpanContextFromObject(obj Object) (trace.SpanContext, Scheme, error) {
	return SpanContextFromAnnotations(obj.GetAnnotations())
}

// Mode says how a span relates to the context an object carries.
type Mode uint8

// Modes.
const (
	// ModeParent makes the span a child of the object's context (the lifecycle proposal:
	// work on the object continues its trace). Without a context on the object the span's
	// parent is the one in ctx.
	ModeParent Mode = iota
	// ModeLink keeps the parent in ctx (a new trace when ctx has none) and adds a link to the
	// object's context (the asynchronous propagation proposal).
	ModeLink
)

// StartSpanFromObject starts a span named name with tracer, related to the span context obj
// carries as mode says. With no context on obj (or one that does not decode) the span starts
// from ctx as tracer.Start would. Links and parents come from the object; opts may add
// attributes, a kind, more links.
func StartSpanFromObject(ctx context.Context, tracer trace.Tracer, obj Object, name string, mode Mode, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	sc, _, err := SpanContextFromObject(obj)
	if err != nil || !sc.IsValid() {
		return tracer.Start(ctx, name, opts...)
	}
	switch mode {
	case ModeLink:
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	default:
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return tracer.Start(ctx, name, opts...)
}

// EncodeOptions say where and how EncodeContextIntoObject writes.
type EncodeOptions struct {
	// Scheme is the annotation to write: SchemeContext (the default when zero) or
	// SchemeTraceparent.
	Scheme Scheme
	// Encoding is the form of ContextAnnotation's value; ignored for SchemeTraceparent.
	Encoding Encoding
}

// EncodeContextIntoObject stores the span context of ctx's current span in obj's annotations,
// replacing any context obj carried under either scheme (an object carries one context). It
// reports false, leaving obj unchanged, when ctx has no valid span context.
func EncodeContextIntoObject(ctx context.Context, obj Object, o EncodeOptions) bool {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return false
	}
	a := withoutContext(obj.GetAnnotations(), 3)
	switch o.Scheme {
	case SchemeTraceparent:
		a[TraceparentAnnotation] = FormatTraceparent(sc)
		if ts := sc.TraceState().String(); ts != "" {
			a[TracestateAnnotation] = ts
		}
	default:
		if o.Encoding == EncodingBinary {
			a[ContextAnnotation] = EncodeBinary(sc)
		} else {
			a[ContextAnnotation] = FormatTraceparent(sc)
		}
	}
	obj.SetAnnotations(a)
	return true
}

// RemoveSpanContextFromObject removes every trace context annotation from obj, as a controller
// does when the object reaches its desired state and its trace ends. It reports whether there
// was one; obj's annotations are not touched when there was none.
func RemoveSpanContextFromObject(obj Object) bool {
	a := obj.GetAnnotations()
	_, c := a[ContextAnnotation]
	_, p := a[TraceparentAnnotation]
	_, s := a[TracestateAnnotation]
	if !c && !p && !s {
		return false
	}
	a = withoutContext(a, 0)
	if len(a) == 0 {
		a = nil
	}
	obj.SetAnnotations(a)
	return true
}

// withoutContext returns a copy of a without the trace context keys, with room for extra more
// (the caller's map may be shared, as objects from an informer's cache are).
func withoutContext(a map[string]string, extra int) map[string]string {
	out := make(map[string]string, len(a)+extra)
	for k, v := range a {
		switch k {
		case ContextAnnotation, TraceparentAnnotation, TracestateAnnotation:
		default:
			out[k] = v
		}
	}
	return out
}

// AnnotationCarrier lets an OpenTelemetry TextMapPropagator read and write an object's
// annotations: field f is the annotation CarrierPrefix+f, so the W3C TraceContext propagator
// uses TraceparentAnnotation and TracestateAnnotation. Set copies the annotations before its
// first change, so an object shared with a cache is not written through.
type AnnotationCarrier struct {
	Object Object
	copied bool
}

// Get returns the value of the annotation for field key.
func (c *AnnotationCarrier) Get(key string) string {
	return c.Object.GetAnnotations()[CarrierPrefix+key]
}

// Set sets the annotation for field key.
func (c *AnnotationCarrier) Set(key, value string) {
	a := c.Object.GetAnnotations()
	if !c.copied {
		cp := make(map[string]string, len(a)+2)
		for k, v := range a {
			cp[k] = v
		}
		a = cp
		c.copied = true
	}
	a[CarrierPrefix+key] = value
	c.Object.SetAnnotations(a)
}

// Keys returns the fields present on the object (its CarrierPrefix annotations, prefix removed).
func (c *AnnotationCarrier) Keys() []string {
	var keys []string
	for k := range c.Object.GetAnnotations() {
		if len(k) > len(CarrierPrefix) && k[:len(CarrierPrefix)] == CarrierPrefix {
			keys = append(keys, k[len(CarrierPrefix):])
		}
	}
	return keys
}
