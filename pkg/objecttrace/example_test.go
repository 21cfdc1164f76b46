// SPDX-License-Identifier: Apache-2.0

package objecttrace_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
)

// A controller continues the trace a ReplicaSet carries while it creates the ReplicaSet's Pod,
// stores the context on the Pod, a later actor links to the Pod's context, and the status
// update that makes the Pod Ready removes it (the Pod's trace has ended).
func Example() {
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tracer := tp.Tracer("my-controller")

	// The ReplicaSet carries the Deployment's trace (trace.kubernetes.io/context).
	rs := &metav1.ObjectMeta{Name: "web-7d9f", Annotations: map[string]string{
		objecttrace.ContextAnnotation: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	}}

	// Continue its trace (parent) while creating its Pod, and store the context on the Pod.
	ctx, span := objecttrace.StartSpanFromObject(context.Background(), tracer, rs, "create pod", objecttrace.ModeParent)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-7d9f-abcde"}}
	objecttrace.EncodeContextIntoObject(ctx, pod, objecttrace.EncodeOptions{})
	span.End()
	sc, scheme, _ := objecttrace.SpanContextFromObject(pod)
	fmt.Println(scheme, sc.TraceID())

	// A later actor links to the Pod's context instead of joining its trace.
	_, audit := objecttrace.StartSpanFromObject(context.Background(), tracer, pod, "audit", objecttrace.ModeLink)
	audit.End()
	links := audit.(sdktrace.ReadOnlySpan).Links()
	fmt.Println(len(links), links[0].SpanContext.TraceID() == sc.TraceID())

	// Any propagator works through the carrier (W3C Trace Context on tracing.k8s.io/*).
	job := &metav1.ObjectMeta{Name: "report"}
	propagation.TraceContext{}.Inject(ctx, &objecttrace.AnnotationCarrier{Object: job})
	_, scheme, _ = objecttrace.SpanContextFromObject(job)
	fmt.Println(scheme)

	// The status update that makes the Pod Ready ends its trace.
	objecttrace.RemoveSpanContextFromObject(pod)
	_, scheme, _ = objecttrace.SpanContextFromObject(pod)
	fmt.Println(scheme)
	// Output:
	// trace.kubernetes.io/context 4bf92f3577b34da6a3ce929d0e0e4736
	// 1 true
	// tracing.k8s.io/traceparent
	// none
}
