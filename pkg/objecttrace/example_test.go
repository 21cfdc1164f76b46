// SPDX-License-Identifier: Apache-2.0

package objecttrace_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
)

// A controller continues the trace a Deployment carries while it creates a ReplicaSet's Pod,
// stores the context on the Pod, and removes it when the Pod reaches its desired state.
func Example() {
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tracer := tp.Tracer("my-controller")

	rs := &metav1.ObjectMeta{Name: "web-7d9f", Annotations: map[string]string{
		objecttrace.ContextAnnotation: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	}}
	ctx, span := objecttrace.StartSpanFromObject(context.Background(), tracer, rs, "create pod", objecttrace.ModeParent)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-7d9f-abcde"}}
	objecttrace.EncodeContextIntoObject(ctx, pod, objecttrace.EncodeOptions{})
	span.End()

	sc, scheme, _ := objecttrace.SpanContextFromObject(pod)
	fmt.Println(scheme, sc.TraceID())

	// Later, in the status update that makes the Pod Ready:
	objecttrace.RemoveSpanContextFromObject(pod)
	_, scheme, _ = objecttrace.SpanContextFromObject(pod)
	fmt.Println(scheme)
	// Output:
	// trace.kubernetes.io/context 4bf92f3577b34da6a3ce929d0e0e4736
	// none
}
