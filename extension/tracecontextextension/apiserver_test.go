// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/tracesource"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
)

// The contract object_ref, kube_events and kube_lifecycle ask, with its trust decision.
var (
	_ tracesource.Source = (*traceContextExtension)(nil)
	_ tracesource.Trust  = (*traceContextExtension)(nil)
)

// The optional method object_ref asks once per batch.
var _ interface{ TraceContextsHeld() bool } = (*traceContextExtension)(nil)

// TestAgainstAPIServer writes, as a controller would, a Deployment with a context (the webhook's
// binary form), its ReplicaSet without one and Pods on two nodes, then checks what a cluster-wide
// and a node-scoped extension answer, and that they follow the context being replaced, removed
// and its object deleted.
func TestAgainstAPIServer(t *testing.T) {
	cluster := kubecluster.Start(t)
	restCfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	kc, err := kubernetes.NewForConfig(restCfg)
	require.NoError(t, err)
	ctx := context.Background()
	tp := sdktrace.NewTracerProvider()
	defer func() { require.NoError(t, tp.Shutdown(ctx)) }()
	tracer := tp.Tracer("test-controller")

	const ns = "shop"
	_, err = kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// No controller manager runs: create the service account it would.
	_, err = kc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	// The user's request: a Deployment carrying the context of the span that created it.
	userCtx, userSpan := tracer.Start(ctx, "kubectl apply")
	userSpan.End()
	labels := map[string]string{"app": "web"}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
		},
	}
	require.True(t, objecttrace.EncodeContextIntoObject(userCtx, deploy, objecttrace.EncodeOptions{Encoding: objecttrace.EncodingBinary}))
	deploy, err = kc.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{})
	require.NoError(t, err)
	deployCtx := userSpan.SpanContext()

	controller := func(kind, name string, uid string) []metav1.OwnerReference {
		yes := true
		apiVersion := "apps/v1"
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: k8stypes.UID(uid), Controller: &yes}}
	}
	rs, err := kc.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: ns, OwnerReferences: controller("Deployment", "web", string(deploy.UID))},
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	newPod := func(name, node string, withContext bool) (*corev1.Pod, trace.SpanContext) {
		spec := podSpec
		spec.NodeName = node
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, Labels: labels,
			OwnerReferences: controller("ReplicaSet", "web-1", string(rs.UID)),
		}, Spec: spec}
		var sc trace.SpanContext
		if withContext {
			pctx, span := objecttrace.StartSpanFromObject(ctx, tracer, deploy, "create pod", objecttrace.ModeParent)
			span.End()
			sc = span.SpanContext()
			require.True(t, objecttrace.EncodeContextIntoObject(pctx, p, objecttrace.EncodeOptions{Scheme: objecttrace.SchemeTraceparent}))
		}
		p, err := kc.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
		return p, sc
	}
	plain, _ := newPod("web-1-plain", "node-1", false)
	// A value that does not decode (anyone who may edit the Pod writes it): counted, and the
	// Pod resolves as if it carried none.
	junk := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "web-1-junk", Namespace: ns, Labels: labels, Annotations: map[string]string{objecttrace.ContextAnnotation: "00-not-a-context"},
		OwnerReferences: controller("ReplicaSet", "web-1", string(rs.UID)),
	}, Spec: corev1.PodSpec{NodeName: "node-1", Containers: podSpec.Containers}}
	_, err = kc.CoreV1().Pods(ns).Create(ctx, junk, metav1.CreateOptions{})
	require.NoError(t, err)
	traced, tracedCtx := newPod("web-1-traced", "node-1", true)
	_, elsewhereCtx := newPod("web-1-elsewhere", "node-2", true)
	assert.Equal(t, deployCtx.TraceID(), tracedCtx.TraceID(), "the Pod's span continues the Deployment's trace")

	// A DaemonSet carries no context: its Pods' owner is fetched once and remembered as "no
	// context" (design.md rule 7), however often its Pods change.
	ds, err := kc.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	for i := range 3 {
		_, err = kc.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("agent-%d", i), Namespace: ns, Labels: labels,
			OwnerReferences: controller("DaemonSet", "agent", string(ds.UID)),
		}, Spec: corev1.PodSpec{NodeName: "node-1", Containers: podSpec.Containers}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	start := func(nodeName string, tel *componenttest.Telemetry, adjust ...func(*Config)) *traceContextExtension {
		cfg := createDefaultConfig().(*Config)
		cfg.Kubeconfig, cfg.NodeName = cluster.Kubeconfig, nodeName
		for _, a := range adjust {
			a(cfg)
		}
		require.NoError(t, cfg.Validate())
		e, err := newExtension(cfg, tel.NewTelemetrySettings())
		require.NoError(t, err)
		require.NoError(t, e.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, e.Shutdown(ctx)) })
		return e
	}
	clusterTel, nodeTel := componenttest.NewTelemetry(), componenttest.NewTelemetry()
	defer func() { require.NoError(t, clusterTel.Shutdown(ctx)); require.NoError(t, nodeTel.Shutdown(ctx)) }()
	clusterWide, node1 := start("", clusterTel), start("node-1", nodeTel)

	type lookup struct {
		apiVersion, kind, name, uid string
	}
	// The Pods' own contexts are written under tracing.k8s.io/traceparent: they are links end
	// to end (design.md rule 10); the Deployment's trace.kubernetes.io/context is a parent.
	linked := func(sc trace.SpanContext) bool { return sc.Equal(tracedCtx) || sc.Equal(elsewhereCtx) }
	expect := func(t *testing.T, e *traceContextExtension, l lookup, want trace.SpanContext) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got, link, ok := e.SpanContextForObject(ctx, l.apiVersion, l.kind, ns, l.name, l.uid)
			assert.Equal(c, want.IsValid(), ok)
			assert.Equal(c, linked(want), link, "link")
			assert.Equal(c, want.TraceID(), got.TraceID())
			assert.Equal(c, want.SpanID(), got.SpanID())
		}, 20*time.Second, 20*time.Millisecond, "%+v", l)
	}
	none := trace.SpanContext{}
	tests := []struct {
		name        string
		l           lookup
		clusterWant trace.SpanContext
		nodeWant    trace.SpanContext
	}{
		{"Pod without context: the Deployment's, by name", lookup{"v1", "Pod", "web-1-plain", ""}, deployCtx, deployCtx},
		{"Pod without context: the Deployment's, by uid", lookup{"v1", "Pod", "", string(plain.UID)}, deployCtx, deployCtx},
		{"Pod with its own context", lookup{"v1", "Pod", "web-1-traced", string(traced.UID)}, tracedCtx, tracedCtx},
		{"Pod on another node", lookup{"v1", "Pod", "web-1-elsewhere", ""}, elsewhereCtx, none},
		{"Pod with an undecodable context: the Deployment's", lookup{"v1", "Pod", "web-1-junk", ""}, deployCtx, deployCtx},
		{"ReplicaSet", lookup{"apps/v1", "ReplicaSet", "web-1", ""}, deployCtx, deployCtx},
		{"Deployment", lookup{"apps/v1", "Deployment", "web", ""}, deployCtx, deployCtx},
		{"kind of another group", lookup{"extensions/v1beta1", "Deployment", "web", ""}, none, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, clusterWide, tt.l, tt.clusterWant)
			expect(t, node1, tt.l, tt.nodeWant)
		})
	}

	// Node scope fetched the ReplicaSet and the Deployment once each, for three Pods, and the
	// DaemonSet once for its three, though it is not kept.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, map[string]int64{"ok": 2, "no_context": 1}, sumBy(t, nodeTel, "extension_trace_context_owner_fetches", "outcome"))
	}, 10*time.Second, 20*time.Millisecond)
	// The DaemonSet's Pods change (a label, as a status update would): no second fetch.
	for i := range 3 {
		p, err := kc.CoreV1().Pods(ns).Get(ctx, fmt.Sprintf("agent-%d", i), metav1.GetOptions{})
		require.NoError(t, err)
		p.Labels["rev"] = "2"
		_, err = kc.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	expect(t, node1, lookup{"v1", "Pod", "agent-2", ""}, none)
	assert.Equal(t, map[string]int64{"ok": 2, "no_context": 1}, sumBy(t, nodeTel, "extension_trace_context_owner_fetches", "outcome"),
		"an owner without context is remembered for owner_ttl")

	// Trust: contexts only on Deployments of another namespace; none of shop's is joined.
	trustTel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, trustTel.Shutdown(ctx)) }()
	wary := start("", trustTel, func(c *Config) { c.Trust = TrustConfig{Namespaces: []string{"payments"}} })
	expect(t, wary, lookup{"v1", "Pod", "web-1-plain", ""}, none)
	expect(t, wary, lookup{"v1", "Pod", "web-1-traced", ""}, none)
	assert.Equal(t, map[string]int64{"": 3}, sumBy(t, trustTel, "extension_trace_context_untrusted_contexts", ""),
		"the Deployment's and two Pods' contexts ignored and counted")
	kindTel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, kindTel.Shutdown(ctx)) }()
	onlyDeployments := start("", kindTel, func(c *Config) { c.Trust = TrustConfig{Kinds: []string{"Deployment"}} })
	expect(t, onlyDeployments, lookup{"v1", "Pod", "web-1-traced", ""}, deployCtx)
	assert.Equal(t, map[string]int64{"Pod": 6, "ReplicaSet": 1, "Deployment": 1}, sumBy(t, nodeTel, "extension_trace_context_objects", "kind"))
	assert.Equal(t, map[string]int64{"Pod": 7, "ReplicaSet": 1, "Deployment": 1}, sumBy(t, clusterTel, "extension_trace_context_objects", "kind"))
	assert.Equal(t, map[string]int64{"": 1}, sumBy(t, nodeTel, "extension_trace_context_invalid_contexts", ""))

	// The Pod reaches its desired state: its controller removes its context; the Deployment's
	// shows through again.
	traced, err = kc.CoreV1().Pods(ns).Get(ctx, traced.Name, metav1.GetOptions{})
	require.NoError(t, err)
	require.True(t, objecttrace.RemoveSpanContextFromObject(traced))
	_, err = kc.CoreV1().Pods(ns).Update(ctx, traced, metav1.UpdateOptions{})
	require.NoError(t, err)
	expect(t, clusterWide, lookup{"v1", "Pod", "web-1-traced", ""}, deployCtx)
	expect(t, node1, lookup{"v1", "Pod", "web-1-traced", ""}, deployCtx)

	// A new rollout replaces the Deployment's context (seen cluster-wide at once).
	nextCtx, next := tracer.Start(ctx, "kubectl rollout restart")
	next.End()
	deploy, err = kc.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	require.True(t, objecttrace.EncodeContextIntoObject(nextCtx, deploy, objecttrace.EncodeOptions{}))
	_, err = kc.AppsV1().Deployments(ns).Update(ctx, deploy, metav1.UpdateOptions{})
	require.NoError(t, err)
	expect(t, clusterWide, lookup{"v1", "Pod", "web-1-plain", ""}, next.SpanContext())

	// Deleted Pods are forgotten (grace period 0: no kubelet runs to finish a graceful deletion).
	now := int64(0)
	require.NoError(t, kc.CoreV1().Pods(ns).Delete(ctx, "web-1-elsewhere", metav1.DeleteOptions{GracePeriodSeconds: &now}))
	expect(t, clusterWide, lookup{"v1", "Pod", "web-1-elsewhere", ""}, none)
}

// sumBy returns an int64 sum's values by the attribute key ("" for one total).
func sumBy(t *testing.T, tel *componenttest.Telemetry, name, key string) map[string]int64 {
	t.Helper()
	m, err := tel.GetMetric("otelcol_" + name)
	require.NoError(t, err)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is not an int64 sum", name)
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		v, _ := dp.Attributes.Value(attribute.Key(key))
		out[v.AsString()] += dp.Value
	}
	return out
}

// TestLookupMode: the events collector's trace_context (mode lookup) opens no watch; an Event's
// Pod asked about through FetchSpanContextForObject is read with its ReplicaSet and Deployment,
// once per uid within owner_ttl, a Pod without any context too (design.md rule 11).
func TestLookupMode(t *testing.T) {
	cluster := kubecluster.Start(t)
	restCfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	kc, err := kubernetes.NewForConfig(restCfg)
	require.NoError(t, err)
	ctx := context.Background()
	const ns = "shop"
	_, err = kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = kc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	want := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0x35, 1}, SpanID: trace.SpanID{0x35, 2}, TraceFlags: trace.FlagsSampled})
	labels := map[string]string{"app": "web"}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}}
	deploy, err := kc.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Annotations: map[string]string{objecttrace.TraceparentAnnotation: objecttrace.FormatTraceparent(want)}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	yes := true
	rs, err := kc.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: ns, OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: deploy.UID, Controller: &yes}}},
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	newPod := func(name string, owners []metav1.OwnerReference) *corev1.Pod {
		p, err := kc.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: owners}, Spec: podSpec}, metav1.CreateOptions{})
		require.NoError(t, err)
		return p
	}
	web := newPod("web-1-a", []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: rs.UID, Controller: &yes}})
	bare := newPod("bare", nil)

	cfg := createDefaultConfig().(*Config)
	cfg.Kubeconfig, cfg.Mode = cluster.Kubeconfig, ModeLookup
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(ctx)) }()
	e, err := newExtension(cfg, tel.NewTelemetrySettings())
	require.NoError(t, err)
	require.NoError(t, e.Start(ctx, componenttest.NewNopHost()))
	defer func() { require.NoError(t, e.Shutdown(ctx)) }()

	_, _, ok := e.SpanContextForObject(ctx, "v1", "Pod", ns, web.Name, string(web.UID))
	assert.False(t, ok, "nothing is watched: unknown until fetched")
	for range 3 {
		got, link, ok := e.FetchSpanContextForObject(ctx, "v1", "Pod", ns, web.Name, string(web.UID))
		require.True(t, ok)
		assert.Equal(t, want.TraceID(), got.TraceID())
		assert.True(t, link, "the Deployment's tracing.k8s.io/traceparent stays a link")
		_, _, ok = e.FetchSpanContextForObject(ctx, "v1", "Pod", ns, bare.Name, string(bare.UID))
		assert.False(t, ok, "a Pod without any context")
	}
	_, _, ok = e.FetchSpanContextForObject(ctx, "v1", "Node", "", "node-1", "node-uid")
	assert.False(t, ok, "a kind not configured is not fetched")
	// The Pod, its ReplicaSet and its Deployment once each, and the bare Pod once (negative),
	// however often they are asked about.
	assert.Equal(t, map[string]int64{"ok": 3, "no_context": 1}, sumBy(t, tel, "extension_trace_context_owner_fetches", "outcome"))
}
