// SPDX-License-Identifier: Apache-2.0

package crosscomponent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/tracesource"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubelifecyclereceiver"
)

// TestOwnerReadAgainForANewRollout: trace_context in node scope (as the DaemonSet runs it) and
// kube_lifecycle against the API server. A traced Deployment's first ReplicaSet and its Pod
// start: the Pod's lifecycle trace is the Deployment's. The Deployment's context is then
// replaced and it rolls out a new ReplicaSet, whose Pod starts on the node well within
// owner_ttl: the new ReplicaSet was created after the Deployment was read, so the Deployment
// is read again, and the new Pod's trace is the new context's, not the previous rollout's
// (trace_context design.md rule 7, re-read). Then a Pod of the second ReplicaSet created after
// that ReplicaSet was read lands in the same new trace.
func TestOwnerReadAgainForANewRollout(t *testing.T) {
	cluster, client := apiServer(t)
	ctx := context.Background()
	const ns = "reread"
	ensureNamespace(t, client, ns)
	tp := sdktrace.NewTracerProvider()
	defer func() { require.NoError(t, tp.Shutdown(ctx)) }()
	tracer := tp.Tracer("test-controller")
	newContext := func(name string) (context.Context, trace.SpanContext) {
		c, span := tracer.Start(ctx, name)
		span.End()
		return c, span.SpanContext()
	}

	labels := map[string]string{"app": "web"}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}
	firstCtx, first := newContext("kubectl apply")
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
		},
	}
	require.True(t, objecttrace.EncodeContextIntoObject(firstCtx, deploy, objecttrace.EncodeOptions{}))
	deploy, err := client.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{})
	require.NoError(t, err)
	controller := func(kind, name string, uid k8stypes.UID) []metav1.OwnerReference {
		yes := true
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &yes}}
	}
	newReplicaSet := func(name string) *appsv1.ReplicaSet {
		rs, err := client.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: controller("Deployment", "web", deploy.UID)},
			Spec: appsv1.ReplicaSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
			},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		return rs
	}
	var src tracesource.Source
	// startPod creates a Pod of rs on node-1 and, once trace_context answers for it (its owners
	// read), writes it Ready as the kubelet would; it returns the Pod's lifecycle trace id.
	startPod := func(name string, rs *appsv1.ReplicaSet, sink *consumertest.TracesSink) string {
		spec := podSpec
		spec.NodeName = "node-1"
		p, err := client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: controller("ReplicaSet", rs.Name, rs.UID)},
			Spec:       spec,
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, _, ok := src.SpanContextForObject(ctx, "v1", "Pod", ns, name, string(p.UID))
			return ok
		}, 30*time.Second, 20*time.Millisecond, "trace_context answers for %s", name)
		at := metav1.NewTime(time.Now().UTC().Truncate(time.Second).Add(time.Second))
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
		}, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}}}}
		_, err = client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		require.NoError(t, err)
		var traceID string
		require.Eventually(t, func() bool {
			traceID = rootTrace(sink, name)
			return traceID != ""
		}, 30*time.Second, 20*time.Millisecond, "the lifecycle trace of %s", name)
		return traceID
	}

	ext := startTraceContext(t, cluster.Kubeconfig, "node-1")
	src = ext.(tracesource.Source)
	f := kubelifecyclereceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*kubelifecyclereceiver.Config)
	cfg.Kubeconfig, cfg.NodeName = cluster.Kubeconfig, "node-1"
	cfg.TraceContext = &traceContextID
	sink := &consumertest.TracesSink{}
	rcv, err := f.CreateTraces(ctx, receivertest.NewNopSettings(f.Type()), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(ctx, host{traceContextID: ext}))
	defer func() { require.NoError(t, rcv.Shutdown(ctx)) }()

	rs1 := newReplicaSet("web-1")
	assert.Equal(t, first.TraceID().String(), startPod("web-1-a", rs1, sink), "the first rollout's Pod: the Deployment's trace")

	// The next desired state: the Deployment's context replaced, a new ReplicaSet.
	secondCtx, second := newContext("kubectl set image")
	deploy, err = client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	require.True(t, objecttrace.EncodeContextIntoObject(secondCtx, deploy, objecttrace.EncodeOptions{}))
	_, err = client.AppsV1().Deployments(ns).Update(ctx, deploy, metav1.UpdateOptions{})
	require.NoError(t, err)
	// Creation times have one-second precision and trace_context counts only a dependent created
	// in a later second than the owner's read (its design.md rule 7): a real rollout comes
	// seconds after the first Pod's owners were read; here the clock is let pass that second.
	read := time.Now()
	require.Eventually(t, func() bool { return time.Now().Truncate(time.Second).After(read) }, 2*time.Second, 10*time.Millisecond)
	rs2 := newReplicaSet("web-2")
	assert.Equal(t, second.TraceID().String(), startPod("web-2-a", rs2, sink), "the new ReplicaSet's Pod: the replaced context's trace")
	require.Eventually(t, func() bool { return time.Now().Truncate(time.Second).After(read.Add(time.Second)) }, 3*time.Second, 10*time.Millisecond)
	assert.Equal(t, second.TraceID().String(), startPod("web-2-b", rs2, sink), "a later Pod of the new ReplicaSet: the same trace")
}

// rootTrace returns the trace id of the Pod start span of the Pod named name, or "".
func rootTrace(sink *consumertest.TracesSink, name string) string {
	for _, td := range sink.AllTraces() {
		for _, sp := range allSpans(td) {
			if sp.Name() != "Pod start" {
				continue
			}
			if v, ok := sp.Attributes().Get(attr.Subject.Name); ok && v.Str() == name {
				return sp.TraceID().String()
			}
		}
	}
	return ""
}
