// SPDX-License-Identifier: Apache-2.0

package objecttrace

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every Kubernetes object is an Object.
var _ Object = (metav1.Object)(nil)

const (
	tpSampled  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	binSampled = "AABL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3AgE="
	tpOther    = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
)

func newTracer(t *testing.T) (trace.Tracer, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.Background())) })
	return tp.Tracer("objecttrace-test"), rec
}

func TestSpanContextFromAnnotations(t *testing.T) {
	t.Parallel()
	otherTrace := trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c}
	tests := []struct {
		name        string
		annotations map[string]string
		wantTrace   trace.TraceID
		wantScheme  Scheme
		wantErr     error
	}{
		{"no annotations", nil, trace.TraceID{}, SchemeNone, nil},
		{"unrelated annotations", map[string]string{"a": "b"}, trace.TraceID{}, SchemeNone, nil},
		{"context as traceparent", map[string]string{ContextAnnotation: tpSampled}, testTraceID, SchemeContext, nil},
		{"context as binary", map[string]string{ContextAnnotation: binSampled}, testTraceID, SchemeContext, nil},
		{"async traceparent", map[string]string{TraceparentAnnotation: tpOther}, otherTrace, SchemeTraceparent, nil},
		{"both: the context annotation first", map[string]string{ContextAnnotation: tpSampled, TraceparentAnnotation: tpOther}, testTraceID, SchemeContext, nil},
		{"bad context, good traceparent", map[string]string{ContextAnnotation: "junk", TraceparentAnnotation: tpOther}, otherTrace, SchemeTraceparent, nil},
		{"bad context only", map[string]string{ContextAnnotation: "junk"}, trace.TraceID{}, SchemeNone, ErrMalformed},
		{"zero ids", map[string]string{TraceparentAnnotation: "00-00000000000000000000000000000000-b7ad6b7169203331-00"}, trace.TraceID{}, SchemeNone, ErrInvalidIDs},
		{"tracestate alone", map[string]string{TracestateAnnotation: "a=b"}, trace.TraceID{}, SchemeNone, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, scheme, err := SpanContextFromAnnotations(tt.annotations)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantScheme, scheme)
			assert.Equal(t, tt.wantTrace, sc.TraceID())
			assert.Equal(t, tt.wantScheme != SchemeNone, sc.IsValid())
		})
	}
}

func TestStartSpanFromObject(t *testing.T) {
	t.Parallel()
	tracer, rec := newTracer(t)
	ctx := context.Background()
	callerCtx, caller := tracer.Start(ctx, "caller")
	caller.End()

	traced := &metav1.ObjectMeta{Annotations: map[string]string{ContextAnnotation: binSampled}}
	async := &metav1.ObjectMeta{Annotations: map[string]string{TraceparentAnnotation: tpSampled}}
	plain := &metav1.ObjectMeta{}

	tests := []struct {
		name       string
		ctx        context.Context
		obj        Object
		mode       Mode
		wantParent trace.SpanContext
		wantLinks  []trace.SpanContext
	}{
		{"parent mode: child of the object's context", ctx, traced, ModeParent, testSC(trace.FlagsSampled), nil},
		{"parent mode wins over the caller's span", callerCtx, async, ModeParent, testSC(trace.FlagsSampled), nil},
		{"link mode without caller: new trace, linked", ctx, async, ModeLink, trace.SpanContext{}, []trace.SpanContext{testSC(trace.FlagsSampled)}},
		{"link mode keeps the caller as parent", callerCtx, traced, ModeLink, caller.SpanContext(), []trace.SpanContext{testSC(trace.FlagsSampled)}},
		{"no context: the caller's child", callerCtx, plain, ModeParent, caller.SpanContext(), nil},
		{"no context, no caller: a root", ctx, plain, ModeLink, trace.SpanContext{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, span := StartSpanFromObject(tt.ctx, tracer, tt.obj, tt.name, tt.mode, trace.WithSpanKind(trace.SpanKindInternal))
			span.End()
			var got sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				if s.Name() == tt.name {
					got = s
				}
			}
			require.NotNil(t, got)
			assert.Equal(t, tt.wantParent.TraceID(), got.Parent().TraceID())
			assert.Equal(t, tt.wantParent.SpanID(), got.Parent().SpanID())
			if tt.wantParent.IsValid() {
				assert.Equal(t, tt.wantParent.TraceID(), got.SpanContext().TraceID(), "same trace as the parent")
			}
			var links []trace.SpanContext
			for _, l := range got.Links() {
				links = append(links, l.SpanContext)
			}
			require.Len(t, links, len(tt.wantLinks))
			for i := range links {
				assert.True(t, links[i].Equal(tt.wantLinks[i]), "link %d: %v", i, links[i])
			}
			if len(tt.wantLinks) > 0 && !tt.wantParent.IsValid() {
				assert.NotEqual(t, testTraceID, got.SpanContext().TraceID(), "a linked span starts its own trace")
			}
		})
	}
}

func TestEncodeContextIntoObject(t *testing.T) {
	t.Parallel()
	tracer, _ := newTracer(t)
	ctx, span := tracer.Start(context.Background(), "controller")
	defer span.End()
	sc := span.SpanContext()

	tests := []struct {
		name   string
		before map[string]string
		opts   EncodeOptions
		want   map[string]string
	}{
		{
			"context annotation as traceparent",
			map[string]string{"keep": "me"},
			EncodeOptions{},
			map[string]string{"keep": "me", ContextAnnotation: FormatTraceparent(sc)},
		},
		{
			"context annotation as binary", nil,
			EncodeOptions{Encoding: EncodingBinary},
			map[string]string{ContextAnnotation: EncodeBinary(sc)},
		},
		{
			"traceparent replaces the context annotation",
			map[string]string{ContextAnnotation: binSampled},
			EncodeOptions{Scheme: SchemeTraceparent},
			map[string]string{TraceparentAnnotation: FormatTraceparent(sc)},
		},
		{
			"context replaces traceparent and tracestate",
			map[string]string{TraceparentAnnotation: tpOther, TracestateAnnotation: "a=b"},
			EncodeOptions{Scheme: SchemeContext},
			map[string]string{ContextAnnotation: FormatTraceparent(sc)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var shared map[string]string
			if tt.before != nil {
				shared = map[string]string{}
				for k, v := range tt.before {
					shared[k] = v
				}
			}
			obj := &metav1.ObjectMeta{Annotations: shared}
			require.True(t, EncodeContextIntoObject(ctx, obj, tt.opts))
			assert.Equal(t, tt.want, obj.Annotations)
			if tt.before != nil {
				assert.Equal(t, tt.before, shared, "the object's former map (maybe a cache's) is not written")
			}
			got, _, err := SpanContextFromObject(obj)
			require.NoError(t, err)
			assert.Equal(t, sc.TraceID(), got.TraceID())
			assert.Equal(t, sc.SpanID(), got.SpanID())
		})
	}

	obj := &metav1.ObjectMeta{}
	assert.False(t, EncodeContextIntoObject(context.Background(), obj, EncodeOptions{}), "no span in ctx")
	assert.Nil(t, obj.Annotations)
}

func TestEncodeTracestate(t *testing.T) {
	t.Parallel()
	ts, err := trace.ParseTraceState("vendor=value")
	require.NoError(t, err)
	ctx := trace.ContextWithSpanContext(context.Background(), testSC(trace.FlagsSampled).WithTraceState(ts))
	obj := &metav1.ObjectMeta{}
	require.True(t, EncodeContextIntoObject(ctx, obj, EncodeOptions{Scheme: SchemeTraceparent}))
	assert.Equal(t, map[string]string{TraceparentAnnotation: tpSampled, TracestateAnnotation: "vendor=value"}, obj.Annotations)
}

func TestRemoveSpanContextFromObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		annotations map[string]string
		want        map[string]string
		removed     bool
	}{
		{"context annotation", map[string]string{ContextAnnotation: tpSampled, "keep": "me"}, map[string]string{"keep": "me"}, true},
		{"all three keys", map[string]string{ContextAnnotation: binSampled, TraceparentAnnotation: tpOther, TracestateAnnotation: "a=b"}, nil, true},
		{"none", map[string]string{"keep": "me"}, map[string]string{"keep": "me"}, false},
		{"no annotations", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := &metav1.ObjectMeta{Annotations: tt.annotations}
			assert.Equal(t, tt.removed, RemoveSpanContextFromObject(obj))
			assert.Equal(t, tt.want, obj.Annotations)
		})
	}
}

func TestAnnotationCarrierWithPropagators(t *testing.T) {
	t.Parallel()
	tracer, _ := newTracer(t)
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	ctx, span := tracer.Start(context.Background(), "controller")
	defer span.End()

	shared := map[string]string{"keep": "me"}
	obj := &metav1.ObjectMeta{Annotations: shared}
	prop.Inject(ctx, &AnnotationCarrier{Object: obj})
	assert.Equal(t, FormatTraceparent(span.SpanContext()), obj.Annotations[TraceparentAnnotation])
	assert.Equal(t, map[string]string{"keep": "me"}, shared, "Set copies before writing")
	assert.ElementsMatch(t, []string{"traceparent"}, (&AnnotationCarrier{Object: obj}).Keys())

	// What the propagator wrote is what the package reads, and back.
	got, scheme, err := SpanContextFromObject(obj)
	require.NoError(t, err)
	assert.Equal(t, SchemeTraceparent, scheme)
	assert.Equal(t, span.SpanContext().TraceID(), got.TraceID())

	extracted := trace.SpanContextFromContext(prop.Extract(context.Background(), &AnnotationCarrier{Object: obj}))
	assert.True(t, extracted.IsRemote())
	assert.Equal(t, span.SpanContext().SpanID(), extracted.SpanID())
}
