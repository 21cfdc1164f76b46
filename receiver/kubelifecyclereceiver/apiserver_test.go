// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubelifecyclereceiver/internal/metadata"
)

// controller acts as the Deployment and ReplicaSet controllers and the kubelet would: it
// propagates a context Deployment → ReplicaSet → Pod (objecttrace, the seed's key) and writes
// Pod status through the status subresource.
type controller struct {
	t      *testing.T
	client kubernetes.Interface
}

func (c controller) ctx(sc trace.SpanContext) context.Context {
	return trace.ContextWithSpanContext(context.Background(), sc)
}

func (c controller) pod(name, node string, owner *appsv1.ReplicaSet, sc trace.SpanContext, scheme objecttrace.Scheme) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
	if owner != nil {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner.Name, UID: owner.UID, Controller: &yes}}
	}
	if sc.IsValid() {
		objecttrace.EncodeContextIntoObject(c.ctx(sc), p, objecttrace.EncodeOptions{Scheme: scheme})
	}
	p, err := c.client.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{})
	require.NoError(c.t, err)
	return p
}

// status writes conditions (each True at its time) and a running container, as a kubelet; at
// ready it also removes the Pod's context in the same request, as the seed asks of the component
// that brings an object to its desired state.
func (c controller) status(p *corev1.Pod, conds map[corev1.PodConditionType]metav1.Time, started *metav1.Time) *corev1.Pod {
	p, err := c.client.CoreV1().Pods("default").Get(context.Background(), p.Name, metav1.GetOptions{})
	require.NoError(c.t, err)
	for _, ph := range phases {
		if at, ok := conds[ph]; ok {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: ph, Status: corev1.ConditionTrue, LastTransitionTime: at})
		}
	}
	if _, ready := conds[corev1.PodReady]; ready {
		objecttrace.RemoveSpanContextFromObject(p)
	}
	p.Status.Phase = corev1.PodPending
	if started != nil {
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "app", Image: "app:1", ImageID: "app@sha256:1", Ready: true, Started: &[]bool{true}[0],
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: *started}},
		}}
	}
	p, err = c.client.CoreV1().Pods("default").UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
	require.NoError(c.t, err)
	if _, ready := conds[corev1.PodReady]; ready {
		sc, _, _ := objecttrace.SpanContextFromObject(p)
		require.False(c.t, sc.IsValid(), "the status update removed the context")
	}
	return p
}

func spanContext(b byte) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{b, 0xaa, 1}, SpanID: trace.SpanID{b, 0xbb, 2}, TraceFlags: trace.FlagsSampled})
}

// rootsByPod returns the root spans the sink holds, by Pod name.
func rootsByPod(sink *consumertest.TracesSink) map[string][]ptrace.Span {
	out := map[string][]ptrace.Span{}
	for _, td := range sink.AllTraces() {
		spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := range spans.Len() {
			if s := spans.At(i); s.Name() == rootSpanName {
				n, _ := s.Attributes().Get(attr.ObjectName)
				out[n.Str()] = append(out[n.Str()], s)
			}
		}
	}
	return out
}

func startReceiver(t *testing.T, kubeconfig string, sink *consumertest.TracesSink, tweak ...func(*Config)) *lifecycleReceiver {
	cfg := createDefaultConfig().(*Config)
	cfg.Kubeconfig, cfg.NodeName, cfg.GiveUpAfter = kubeconfig, "node-a", 5*time.Second
	for _, f := range tweak {
		f(cfg)
	}
	r, err := newReceiver(receivertest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	return r
}

// startCluster starts a real API server and returns a client and a test controller on it.
func startCluster(t *testing.T) (*kubecluster.Cluster, kubernetes.Interface, controller) {
	cluster := kubecluster.Start(t)
	rc, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	// no controller manager creates the namespace's default service account Pods need
	_, err = client.CoreV1().ServiceAccounts("default").Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return cluster, client, controller{t: t, client: client}
}

// TestLifecycleAgainstAPIServer runs the receiver, node-scoped, against a real kube-apiserver
// while a test controller creates a traced Deployment → ReplicaSet → Pods and writes their
// status as a kubelet would, and checks every trace's ids, parent or link, times and end.
func TestLifecycleAgainstAPIServer(t *testing.T) {
	cluster, client, c := startCluster(t)
	ctx := context.Background()

	// the user's context on the Deployment, propagated to its ReplicaSet (binary form, as the
	// original webhook wrote it)
	userSC := spanContext(1)
	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}},
		},
	}
	objecttrace.EncodeContextIntoObject(c.ctx(userSC), deploy, objecttrace.EncodeOptions{Encoding: objecttrace.EncodingBinary})
	deploy, err := client.AppsV1().Deployments("default").Create(ctx, deploy, metav1.CreateOptions{})
	require.NoError(t, err)
	deploySC, _, err := objecttrace.SpanContextFromObject(deploy)
	require.NoError(t, err)
	rsSC := spanContext(2) // the ReplicaSet controller's span under the Deployment's trace
	rsSC = rsSC.WithTraceID(deploySC.TraceID())
	yes := true
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-7d4b9c8f6", Namespace: "default", OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: deploy.UID, Controller: &yes}}},
		Spec:       appsv1.ReplicaSetSpec{Selector: deploy.Spec.Selector, Template: deploy.Spec.Template},
	}
	objecttrace.EncodeContextIntoObject(c.ctx(rsSC), rs, objecttrace.EncodeOptions{})
	rs, err = client.AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{})
	require.NoError(t, err)

	sink := &consumertest.TracesSink{}
	r := startReceiver(t, cluster.Kubeconfig, sink)
	stopped := false
	defer func() {
		if !stopped {
			require.NoError(t, r.Shutdown(ctx))
		}
	}()

	podSC := rsSC.WithSpanID(trace.SpanID{3, 0xbb, 2}) // the ReplicaSet controller's create-pod span
	traced := c.pod("web-7d4b9c8f6-aaaaa", "node-a", rs, podSC, objecttrace.SchemeContext)
	linked := c.pod("web-7d4b9c8f6-bbbbb", "node-a", rs, podSC, objecttrace.SchemeTraceparent)
	plain := c.pod("plain", "node-a", nil, trace.SpanContext{}, 0)
	elsewhere := c.pod("elsewhere", "node-b", nil, trace.SpanContext{}, 0)
	doomed := c.pod("doomed", "node-a", nil, trace.SpanContext{}, 0)
	stuck := c.pod("stuck", "node-a", nil, trace.SpanContext{}, 0)

	created := traced.CreationTimestamp
	sec := func(n int) metav1.Time { return metav1.NewTime(created.Add(time.Duration(n) * time.Second)) }
	c.status(doomed, map[corev1.PodConditionType]metav1.Time{corev1.PodScheduled: sec(1)}, nil)
	require.NoError(t, client.CoreV1().Pods("default").Delete(ctx, doomed.Name, metav1.DeleteOptions{}))
	for _, p := range []*corev1.Pod{traced, linked, plain, elsewhere} {
		p = c.status(p, map[corev1.PodConditionType]metav1.Time{corev1.PodScheduled: sec(1)}, nil)
		require.Never(t, func() bool { return len(rootsByPod(sink)[p.Name]) > 0 }, 200*time.Millisecond, 20*time.Millisecond, "no span before ready")
		st := sec(3)
		c.status(p, map[corev1.PodConditionType]metav1.Time{
			corev1.PodScheduled: sec(1), corev1.PodInitialized: sec(2), corev1.ContainersReady: sec(4), corev1.PodReady: sec(4),
		}, &st)
	}

	require.Eventually(t, func() bool {
		roots := rootsByPod(sink)
		return len(roots[traced.Name]) == 1 && len(roots[linked.Name]) == 1 && len(roots[plain.Name]) == 1 &&
			len(roots[doomed.Name]) == 1 && len(roots[stuck.Name]) == 1
	}, 30*time.Second, 50*time.Millisecond)
	roots := rootsByPod(sink)
	assert.Empty(t, roots[elsewhere.Name], "another node's Pod")

	own := func(p *corev1.Pod) (pcommon.TraceID, pcommon.SpanID) {
		sum := ids(string(p.UID), p.Generation, "root")
		return pcommon.TraceID(sum[:16]), pcommon.SpanID(sum[16:24])
	}
	outcome := func(s ptrace.Span) string { v, _ := s.Attributes().Get(attr.LifecycleOutcome); return v.Str() }

	s := roots[traced.Name][0]
	assert.Equal(t, pcommon.TraceID(userSC.TraceID()), s.TraceID(), "the user's trace, through Deployment and ReplicaSet")
	assert.Equal(t, pcommon.SpanID(podSC.SpanID()), s.ParentSpanID())
	assert.Equal(t, created.UTC(), s.StartTimestamp().AsTime())
	assert.Equal(t, sec(4).UTC(), s.EndTimestamp().AsTime())
	assert.Equal(t, outcomeReady, outcome(s))

	s = roots[linked.Name][0]
	wantTrace, wantSpan := own(linked)
	assert.Equal(t, wantTrace, s.TraceID())
	assert.Equal(t, wantSpan, s.SpanID())
	assert.True(t, s.ParentSpanID().IsEmpty())
	require.Equal(t, 1, s.Links().Len())
	assert.Equal(t, pcommon.SpanID(podSC.SpanID()), s.Links().At(0).SpanID())

	s = roots[plain.Name][0]
	wantTrace, wantSpan = own(plain)
	assert.Equal(t, wantTrace, s.TraceID())
	assert.Equal(t, wantSpan, s.SpanID())

	s = roots[doomed.Name][0]
	assert.Equal(t, outcomeDeleted, outcome(s))
	assert.Equal(t, ptrace.StatusCodeError, s.Status().Code())
	s = roots[stuck.Name][0]
	assert.Equal(t, outcomeGaveUp, outcome(s))
	assert.GreaterOrEqual(t, s.EndTimestamp().AsTime().Sub(s.StartTimestamp().AsTime()), 5*time.Second)

	// a restarted receiver sees the ready Pods at its first list: their traces were emitted by
	// the receiver before it (design.md rule 6), so nothing is emitted twice; a Pod still
	// pending at the restart is traced once, by the new receiver, when it becomes ready
	require.NoError(t, r.Shutdown(ctx))
	stopped = true
	late := c.pod("late", "node-a", nil, trace.SpanContext{}, 0)
	late = c.status(late, map[corev1.PodConditionType]metav1.Time{corev1.PodScheduled: sec(1)}, nil)
	sink2 := &consumertest.TracesSink{}
	r2 := startReceiver(t, cluster.Kubeconfig, sink2)
	defer func() { require.NoError(t, r2.Shutdown(ctx)) }()
	st := metav1.Now()
	c.status(late, map[corev1.PodConditionType]metav1.Time{
		corev1.PodScheduled: sec(1), corev1.PodInitialized: sec(2), corev1.ContainersReady: st, corev1.PodReady: st,
	}, &st)
	require.Eventually(t, func() bool { return len(rootsByPod(sink2)[late.Name]) == 1 }, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, map[string]int{late.Name: 1}, countRoots(rootsByPod(sink2)), "only the Pod that became ready after the restart")
	assert.Empty(t, rootsByPod(sink)[late.Name], "the stopped receiver emitted nothing for it")
}

func countRoots(m map[string][]ptrace.Span) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = len(v)
	}
	return out
}
