// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"context"
	"fmt"
	"strconv"
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
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubelifecyclereceiver/internal/metadata"
)

// deploymentController acts as kube-controller-manager's Deployment and ReplicaSet controllers
// would, through client-go: it creates a ReplicaSet per revision with the Deployment's context
// propagated to it (and from it to its Pods), scales ReplicaSets, and writes their status and
// the Deployment's. At the desired state it removes the Deployment's context, as the seed asks.
type deploymentController struct {
	t      *testing.T
	client kubernetes.Interface
	ctx    context.Context
}

func (c deploymentController) deployment() *appsv1.Deployment {
	d, err := c.client.AppsV1().Deployments("default").Get(c.ctx, "web", metav1.GetOptions{})
	require.NoError(c.t, err)
	return d
}

// newReplicaSet creates revision rev's ReplicaSet with the Deployment's context (a child span
// of it: the controller's work) and records the revision on the Deployment and its observed
// generation in its status.
func (c deploymentController) newReplicaSet(rev int, replicas int32) (*appsv1.ReplicaSet, trace.SpanContext) {
	d := c.deployment()
	yes := true
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("web-%d", rev), Namespace: "default",
			Annotations:     map[string]string{revisionAnnotation: strconv.Itoa(rev)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes}},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: d.Spec.Selector, Template: d.Spec.Template},
	}
	var sc trace.SpanContext
	if dsc, _, _ := objecttrace.SpanContextFromObject(d); dsc.IsValid() {
		sc = dsc.WithSpanID(trace.SpanID{byte(rev), 0x5e})
		objecttrace.EncodeContextIntoObject(trace.ContextWithSpanContext(c.ctx, sc), rs, objecttrace.EncodeOptions{})
	}
	rs, err := c.client.AppsV1().ReplicaSets("default").Create(c.ctx, rs, metav1.CreateOptions{})
	require.NoError(c.t, err)
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[revisionAnnotation] = strconv.Itoa(rev)
	d, err = c.client.AppsV1().Deployments("default").Update(c.ctx, d, metav1.UpdateOptions{})
	require.NoError(c.t, err)
	d.Status.ObservedGeneration = d.Generation
	_, err = c.client.AppsV1().Deployments("default").UpdateStatus(c.ctx, d, metav1.UpdateOptions{})
	require.NoError(c.t, err)
	return rs, sc
}

// scale sets a ReplicaSet's spec and then its status, as the ReplicaSet controller reports its
// Pods.
func (c deploymentController) scale(name string, spec, replicas, available int32) {
	rs, err := c.client.AppsV1().ReplicaSets("default").Get(c.ctx, name, metav1.GetOptions{})
	require.NoError(c.t, err)
	rs.Spec.Replicas = &spec
	rs, err = c.client.AppsV1().ReplicaSets("default").Update(c.ctx, rs, metav1.UpdateOptions{})
	require.NoError(c.t, err)
	rs.Status.Replicas, rs.Status.AvailableReplicas, rs.Status.ReadyReplicas = replicas, available, available
	rs.Status.ObservedGeneration = rs.Generation
	_, err = c.client.AppsV1().ReplicaSets("default").UpdateStatus(c.ctx, rs, metav1.UpdateOptions{})
	require.NoError(c.t, err)
}

// status writes the Deployment's status; complete also removes its context first (the end of
// its trace).
func (c deploymentController) status(updated, available, total int32, cond *appsv1.DeploymentCondition, complete bool) {
	d := c.deployment()
	if complete {
		objecttrace.RemoveSpanContextFromObject(d)
		var err error
		d, err = c.client.AppsV1().Deployments("default").Update(c.ctx, d, metav1.UpdateOptions{})
		require.NoError(c.t, err)
	}
	d.Status.UpdatedReplicas, d.Status.AvailableReplicas, d.Status.ReadyReplicas, d.Status.Replicas = updated, available, available, total
	d.Status.ObservedGeneration = d.Generation
	if cond != nil {
		d.Status.Conditions = []appsv1.DeploymentCondition{*cond}
	}
	_, err := c.client.AppsV1().Deployments("default").UpdateStatus(c.ctx, d, metav1.UpdateOptions{})
	require.NoError(c.t, err)
}

// userUpdate changes the template (a new generation) with a new context, or none.
func (c deploymentController) userUpdate(image string, sc trace.SpanContext) *appsv1.Deployment {
	d := c.deployment()
	d.Spec.Template.Spec.Containers[0].Image = image
	objecttrace.RemoveSpanContextFromObject(d)
	if sc.IsValid() {
		objecttrace.EncodeContextIntoObject(trace.ContextWithSpanContext(c.ctx, sc), d, objecttrace.EncodeOptions{})
	}
	d, err := c.client.AppsV1().Deployments("default").Update(c.ctx, d, metav1.UpdateOptions{})
	require.NoError(c.t, err)
	return d
}

// rolloutOutcomes lists the rollout traces' generations and outcomes, for failure messages.
func rolloutOutcomes(sink *consumertest.TracesSink) []string {
	var out []string
	for gen, list := range rolloutTraces(sink) {
		for _, spans := range list {
			o, _ := spans.At(0).Attributes().Get(attr.LifecycleOutcome)
			out = append(out, fmt.Sprintf("%d: %s", gen, o.Str()))
		}
	}
	return out
}

// rolloutTraces returns the rollout traces the sink holds, by generation.
func rolloutTraces(sink *consumertest.TracesSink) map[int64][]ptrace.SpanSlice {
	out := map[int64][]ptrace.SpanSlice{}
	for _, td := range sink.AllTraces() {
		spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		if root := spans.At(0); root.Name() == rolloutSpanName {
			g, _ := root.Attributes().Get(attr.LifecycleGeneration)
			out[g.Int()] = append(out[g.Int()], spans)
		}
	}
	return out
}

// TestRolloutsAgainstAPIServer runs the receiver as the events Deployment does (Deployments
// cluster-wide, leader-elected; Pods too) against a real kube-apiserver while a test client
// acts as the Deployment and ReplicaSet controllers and the kubelet: a traced creation, a traced
// rolling update whose context replaces the first, an untraced update that fails its progress
// deadline. Every rollout trace is checked for ids, parent or link, times and end, and the Pods'
// traces for the context propagated Deployment → ReplicaSet → Pod.
func TestRolloutsAgainstAPIServer(t *testing.T) {
	cluster := kubecluster.Start(t)
	rc, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	ctx := context.Background()
	c := deploymentController{t: t, client: client, ctx: ctx}
	_, err = client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	cfg := createDefaultConfig().(*Config)
	cfg.Kubeconfig, cfg.Kinds = cluster.Kubeconfig, []Kind{KindPod, KindDeployment}
	cfg.LeaderElection = kubeclient.NewDefaultLeaderElectionConfig("lifecycle")
	cfg.LeaderElection.Enabled, cfg.LeaderElection.LeaseNamespace, cfg.LeaderElection.Identity = true, "default", "events-0"
	sink := &consumertest.TracesSink{}
	r, err := newReceiver(receivertest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(ctx, componenttest.NewNopHost()))
	defer func() { require.NoError(t, r.Shutdown(ctx)) }()
	require.Eventually(t, func() bool {
		l, err := client.CoordinationV1().Leases("default").Get(ctx, "lifecycle", metav1.GetOptions{})
		return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "events-0"
	}, 30*time.Second, 20*time.Millisecond, "the receiver leads")

	// 1. creation, with the user's context (binary form, as the original webhook wrote it)
	userSC := spanContext(7)
	labels := map[string]string{"app": "web"}
	two := int32(2)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}},
		},
	}
	objecttrace.EncodeContextIntoObject(trace.ContextWithSpanContext(ctx, userSC), d, objecttrace.EncodeOptions{Encoding: objecttrace.EncodingBinary})
	began1 := time.Now()
	d, err = client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{})
	require.NoError(t, err)
	rs1, rs1SC := c.newReplicaSet(1, 2)
	assert.Equal(t, userSC.TraceID(), rs1SC.TraceID())
	// the ReplicaSet controller creates its Pods with its context; the kubelet makes them Ready
	pc := controller{t: t, client: client}
	var pods []*corev1.Pod
	for i := range 2 {
		podSC := rs1SC.WithSpanID(trace.SpanID{1, 0x90, byte(i)})
		pods = append(pods, pc.pod(fmt.Sprintf("web-1-%d", i), "node-a", rs1, podSC, objecttrace.SchemeContext))
	}
	for _, p := range pods {
		now := metav1.NewTime(time.Now())
		pc.status(p, map[corev1.PodConditionType]metav1.Time{corev1.PodScheduled: now, corev1.PodInitialized: now, corev1.ContainersReady: now, corev1.PodReady: now}, &now)
	}
	c.scale(rs1.Name, 2, 2, 2)
	require.Never(t, func() bool { return len(rolloutTraces(sink)[d.Generation]) > 0 }, 200*time.Millisecond, 20*time.Millisecond, "not at its desired state yet: %v", rolloutOutcomes(sink))
	done1 := time.Now()
	c.status(2, 2, 2, nil, true)
	require.Eventually(t, func() bool { return len(rolloutTraces(sink)[d.Generation]) == 1 }, 10*time.Second, 20*time.Millisecond, "%v", rolloutOutcomes(sink))
	ended1 := time.Now()

	// 2. a rolling update with a new context (replacing the one the end removed)
	updateSC := spanContext(8)
	began2 := time.Now()
	d2 := c.userUpdate("app:2", updateSC)
	rs2, rs2SC := c.newReplicaSet(2, 1)
	c.scale(rs2.Name, 1, 1, 1)
	c.scale(rs1.Name, 1, 1, 1)
	c.scale(rs2.Name, 2, 2, 1)
	up2 := time.Now()
	c.scale(rs2.Name, 2, 2, 2)
	c.status(2, 2, 3, nil, false)
	down2 := time.Now()
	c.scale(rs1.Name, 0, 0, 0)
	done2 := time.Now()
	c.status(2, 2, 2, nil, true)
	require.Eventually(t, func() bool { return len(rolloutTraces(sink)[d2.Generation]) == 1 }, 10*time.Second, 20*time.Millisecond, "%v", rolloutOutcomes(sink))
	ended2 := time.Now()

	// 3. an update without a context that never becomes available
	began3 := time.Now()
	d3 := c.userUpdate("app:broken", trace.SpanContext{})
	rs3, _ := c.newReplicaSet(3, 1)
	c.scale(rs3.Name, 1, 1, 0)
	failed := metav1.NewTime(time.Now().Truncate(time.Second)) // as the API stores it
	c.status(1, 2, 3, &appsv1.DeploymentCondition{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", LastUpdateTime: failed, LastTransitionTime: failed,
	}, false)
	require.Eventually(t, func() bool { return len(rolloutTraces(sink)[d3.Generation]) == 1 }, 10*time.Second, 20*time.Millisecond, "%v", rolloutOutcomes(sink))

	traces := rolloutTraces(sink)
	within := func(what string, got pcommon.Timestamp, from, to time.Time) {
		t.Helper()
		g := got.AsTime()
		assert.False(t, g.Before(from.Truncate(time.Second)) || g.After(to), "%s %s not within [%s, %s]", what, g, from, to)
	}
	own := func(gen int64) (pcommon.TraceID, pcommon.SpanID) {
		sum := ids(string(d.UID), gen, "root")
		return pcommon.TraceID(sum[:16]), pcommon.SpanID(sum[16:24])
	}
	str := func(s ptrace.Span, k string) string { v, _ := s.Attributes().Get(k); return v.AsString() }

	// 1: the user's trace, one ReplicaSet scaled up, linked to the context it carries
	spans := traces[d.Generation][0]
	require.Equal(t, 2, spans.Len())
	root := spans.At(0)
	_, rootID := own(d.Generation)
	assert.Equal(t, pcommon.TraceID(userSC.TraceID()), root.TraceID())
	assert.Equal(t, pcommon.SpanID(userSC.SpanID()), root.ParentSpanID())
	assert.Equal(t, rootID, root.SpanID())
	assert.Equal(t, outcomeAvailable, str(root, attr.LifecycleOutcome))
	assert.Equal(t, "deployment", str(root, attr.LifecycleParent))
	// observations may lag the writes: a time seen is not before its write, not after the end
	within("rollout 1 start", root.StartTimestamp(), began1, root.EndTimestamp().AsTime())
	within("rollout 1 end", root.EndTimestamp(), done1, ended1)
	up := spans.At(1)
	assert.Equal(t, scaleUpSpanName, up.Name())
	assert.Equal(t, rs1.Name, str(up, attr.ObjectName))
	assert.Equal(t, root.SpanID(), up.ParentSpanID())
	require.Equal(t, 1, up.Links().Len())
	assert.Equal(t, pcommon.SpanID(rs1SC.SpanID()), up.Links().At(0).SpanID())

	// the Pods' traces continue the ReplicaSet controller's spans in the user's trace
	for _, p := range pods {
		pr := rootsByPod(sink)[p.Name]
		require.Len(t, pr, 1, p.Name)
		assert.Equal(t, pcommon.TraceID(userSC.TraceID()), pr[0].TraceID())
		podSC, _, _ := objecttrace.SpanContextFromObject(p)
		assert.Equal(t, pcommon.SpanID(podSC.SpanID()), pr[0].ParentSpanID())
	}

	// 2: the update's own context; rs2 scaled up, rs1 scaled down
	spans = traces[d2.Generation][0]
	require.Equal(t, 3, spans.Len())
	root = spans.At(0)
	assert.Equal(t, pcommon.TraceID(updateSC.TraceID()), root.TraceID())
	assert.Equal(t, pcommon.SpanID(updateSC.SpanID()), root.ParentSpanID())
	assert.Equal(t, outcomeAvailable, str(root, attr.LifecycleOutcome))
	end2 := root.EndTimestamp().AsTime()
	within("rollout 2 start", root.StartTimestamp(), began2, end2)
	within("rollout 2 end", root.EndTimestamp(), done2, ended2)
	byName := map[string]ptrace.Span{}
	for i := 1; i < spans.Len(); i++ {
		byName[str(spans.At(i), attr.ObjectName)] = spans.At(i)
	}
	assert.Equal(t, scaleUpSpanName, byName[rs2.Name].Name())
	assert.Equal(t, "2", str(byName[rs2.Name], attr.LifecycleReplicas))
	within("rs2 available", byName[rs2.Name].EndTimestamp(), up2, end2)
	assert.Equal(t, pcommon.SpanID(rs2SC.SpanID()), byName[rs2.Name].Links().At(0).SpanID())
	assert.Equal(t, scaleDownSpanName, byName[rs1.Name].Name())
	within("rs1 scale-down start", byName[rs1.Name].StartTimestamp(), began2, end2)
	within("rs1 scaled down", byName[rs1.Name].EndTimestamp(), down2, end2)

	// 3: no context: a trace of its own, ended with an error at the condition's time
	spans = traces[d3.Generation][0]
	root = spans.At(0)
	trace3, root3 := own(d3.Generation)
	assert.Equal(t, trace3, root.TraceID())
	assert.Equal(t, root3, root.SpanID())
	assert.True(t, root.ParentSpanID().IsEmpty())
	assert.Equal(t, "none", str(root, attr.LifecycleParent))
	assert.Equal(t, outcomeProgressDeadline, str(root, attr.LifecycleOutcome))
	assert.Equal(t, ptrace.StatusCodeError, root.Status().Code())
	within("rollout 3 start", root.StartTimestamp(), began3, failed.Add(time.Second))
	wantEnd := failed.UTC() // the condition's time, or the start when that second began before it
	if start := root.StartTimestamp().AsTime(); start.After(wantEnd) {
		wantEnd = start
	}
	assert.Equal(t, wantEnd, root.EndTimestamp().AsTime().UTC())

	// every rollout traced once
	for gen, list := range traces {
		assert.Len(t, list, 1, "generation %d", gen)
	}
	assert.Len(t, traces, 3)
}
