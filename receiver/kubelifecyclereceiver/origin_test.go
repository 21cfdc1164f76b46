// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
)

// ownerSource answers for Pod "web-1" as trace_context would from its ReplicaSet's context,
// read from the key link says.
type ownerSource struct {
	sc   trace.SpanContext
	link bool
}

func (s ownerSource) SpanContextForObject(_ context.Context, apiVersion, kind, namespace, name, _ string) (trace.SpanContext, bool, bool) {
	if apiVersion == "v1" && kind == "Pod" && namespace == "shop" && name == "web-1" {
		return s.sc, s.link, true
	}
	return trace.SpanContext{}, false, false
}

// warySource is ownerSource with trace_context's trust: no context on a Pod is used.
type warySource struct{ ownerSource }

func (warySource) TrustsContext(kind, _ string) bool { return kind != "Pod" }

func TestOrigin(t *testing.T) {
	t.Parallel()
	own := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, Remote: true})
	owner := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{2}, SpanID: trace.SpanID{2}})
	withAnnotation := func(key string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", Annotations: map[string]string{key: objecttrace.FormatTraceparent(own)}}}
	}
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop"}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-1", Namespace: "shop"}}
	tests := []struct {
		name   string
		source traceContextSource
		pod    *corev1.Pod
		want   origin
	}{
		{"own context, seed's key: parent", ownerSource{sc: owner}, withAnnotation(objecttrace.ContextAnnotation), origin{sc: own, from: "pod"}},
		{"own context, async key: link", ownerSource{sc: owner}, withAnnotation(objecttrace.TraceparentAnnotation), origin{sc: own, link: true, from: "pod"}},
		{"owner's through trace_context", ownerSource{sc: owner}, plain, origin{sc: owner, from: "owner"}},
		{"owner's link stays a link", ownerSource{sc: owner, link: true}, plain, origin{sc: owner, link: true, from: "owner"}},
		{"own context untrusted: the owner's", warySource{ownerSource{sc: owner}}, withAnnotation(objecttrace.ContextAnnotation), origin{sc: owner, from: "owner"}},
		{"own link untrusted: the owner's link", warySource{ownerSource{sc: owner, link: true}}, withAnnotation(objecttrace.ContextAnnotation), origin{sc: owner, link: true, from: "owner"}},
		{"untrusted, trace_context knows nothing", warySource{ownerSource{sc: owner}}, func() *corev1.Pod { p := withAnnotation(objecttrace.ContextAnnotation); p.Name = "db-1"; return p }(), origin{from: "none"}},
		{"trace_context knows nothing", ownerSource{sc: owner}, other, origin{from: "none"}},
		{"no trace_context: the own context is used", nil, withAnnotation(objecttrace.ContextAnnotation), origin{sc: own, from: "pod"}},
		{"no trace_context", nil, plain, origin{from: "none"}},
	}
	for _, tt := range tests {
		r := &lifecycleReceiver{source: tt.source}
		got := r.origin(tt.pod)
		assert.Equal(t, tt.want.from, got.from, tt.name)
		assert.Equal(t, tt.want.link, got.link, tt.name)
		assert.True(t, tt.want.sc.Equal(got.sc), "%s: %v", tt.name, got.sc)
	}
}
