// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
)

// waitingStatus writes, as a kubelet pulling an image, the Pod scheduled and initialized at
// its creation and its container waiting with reason.
func (c controller) waitingStatus(p *corev1.Pod, reason string) {
	p, err := c.client.CoreV1().Pods("default").Get(context.Background(), p.Name, metav1.GetOptions{})
	require.NoError(c.t, err)
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: p.CreationTimestamp},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: p.CreationTimestamp},
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "app", Image: "app:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}},
	}}
	_, err = c.client.CoreV1().Pods("default").UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
	require.NoError(c.t, err)
}

// TestSamplingAndSlowPullAgainstAPIServer: a Pod whose context says "not sampled" gets no
// span (design.md rule 11), a sampled sibling does; a Pod whose image pull is held (the
// kubelet's ErrImagePull, ImagePullBackOff) gets, once it is ready, a trace without error whose
// container start span lasts the whole pull and says what it waited for (rule 4).
func TestSamplingAndSlowPullAgainstAPIServer(t *testing.T) {
	cluster, _, c := startCluster(t)
	ctx := context.Background()

	sink := &consumertest.TracesSink{}
	// the pull below is slower than startReceiver's 5s
	r := startReceiver(t, cluster.Kubeconfig, sink, func(c *Config) { c.GiveUpAfter = time.Hour })
	defer func() { require.NoError(t, r.Shutdown(ctx)) }()

	unsampledSC := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9, 1}, SpanID: trace.SpanID{9, 2}})
	unsampled := c.pod("unsampled", "node-a", nil, unsampledSC, objecttrace.SchemeContext)
	unsampledLink := c.pod("unsampled-link", "node-a", nil, unsampledSC, objecttrace.SchemeTraceparent)
	sampled := c.pod("sampled", "node-a", nil, spanContext(7), objecttrace.SchemeContext)
	slow := c.pod("slow", "node-a", nil, trace.SpanContext{}, 0)
	created := slow.CreationTimestamp

	c.waitingStatus(slow, "ContainerCreating")
	c.waitingStatus(slow, "ErrImagePull")
	c.waitingStatus(slow, "ImagePullBackOff")
	for _, p := range []*corev1.Pod{unsampled, unsampledLink, sampled} {
		now := metav1.Now()
		c.status(p, map[corev1.PodConditionType]metav1.Time{
			corev1.PodScheduled: now, corev1.PodInitialized: now, corev1.ContainersReady: now, corev1.PodReady: now,
		}, &now)
	}
	require.Eventually(t, func() bool { return len(rootsByPod(sink)["sampled"]) == 1 }, 10*time.Second, 20*time.Millisecond)

	// the image arrives 3s (wall time, second precision) after the Pod's creation
	pulled := metav1.NewTime(created.Add(3 * time.Second))
	require.Eventually(t, func() bool { return time.Now().After(pulled.Time) }, 10*time.Second, 50*time.Millisecond)
	c.status(slow, map[corev1.PodConditionType]metav1.Time{
		corev1.PodScheduled: created, corev1.PodInitialized: created, corev1.ContainersReady: pulled, corev1.PodReady: pulled,
	}, &pulled)
	require.Eventually(t, func() bool { return len(rootsByPod(sink)["slow"]) == 1 }, 10*time.Second, 20*time.Millisecond)

	roots := rootsByPod(sink)
	assert.Empty(t, roots["unsampled"], "a child of an unsampled context")
	assert.Empty(t, roots["unsampled-link"], "linked to an unsampled context")

	root := roots["slow"][0]
	assert.Equal(t, ptrace.StatusCodeUnset, root.Status().Code(), "a slow pull is not an error")
	var start ptrace.Span
	found := false
	for _, td := range sink.AllTraces() {
		spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := range spans.Len() {
			if s := spans.At(i); s.Name() == containerStartName && s.TraceID() == root.TraceID() {
				start, found = s, true
			}
		}
	}
	require.True(t, found, "a container start span")
	assert.Equal(t, 3*time.Second, start.EndTimestamp().AsTime().Sub(start.StartTimestamp().AsTime()), "the pull's real duration")
	assert.Equal(t, ptrace.StatusCodeUnset, start.Status().Code())
	w, ok := start.Attributes().Get(attr.LifecycleWaiting)
	require.True(t, ok)
	assert.Equal(t, []any{"app: ContainerCreating", "app: ErrImagePull", "app: ImagePullBackOff"}, w.Slice().AsRaw())
}
