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
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objevents"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubelifecyclereceiver/internal/metadata"
)

// hubExtension stands for trace_context on the events collector: the Event hub
// (internal/k8smodel/objevents) and a trace-context source that knows no object.
type hubExtension struct {
	objevents.Hub
	component.StartFunc
	component.ShutdownFunc
}

func (*hubExtension) SpanContextForObject(context.Context, string, string, string, string, string) (trace.SpanContext, bool, bool) {
	return trace.SpanContext{}, false, false
}

type hubHost map[component.ID]component.Component

func (h hubHost) GetExtensions() map[component.ID]component.Component { return h }

// publishEvents acts as kube_events: it watches the API server's events.k8s.io/v1 Events and
// hands each to the hub, as kube_events' publish does, until ctx ends.
func publishEvents(ctx context.Context, t *testing.T, client kubernetes.Interface, hub *objevents.Hub) {
	lw := cache.NewListWatchFromClient(client.EventsV1().RESTClient(), "events", metav1.NamespaceAll, fields.Everything())
	handle := func(obj any, listed bool) {
		e, ok := obj.(*eventsv1.Event)
		if !ok {
			return
		}
		controller := e.ReportingController
		if controller == "" {
			controller = e.DeprecatedSource.Component
		}
		at := e.EventTime.Time
		if at.IsZero() {
			at = e.DeprecatedLastTimestamp.Time
		}
		hub.PublishObjectEvents([]objevents.Event{{
			Regarding: objevents.Ref{APIVersion: e.Regarding.APIVersion, Kind: e.Regarding.Kind, Namespace: e.Regarding.Namespace, Name: e.Regarding.Name, UID: string(e.Regarding.UID)},
			Reason:    e.Reason, ReportingController: controller, Note: e.Note, Time: at,
		}}, listed)
	}
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw, ObjectType: &eventsv1.Event{},
		Handler: cache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    handle,
			UpdateFunc: func(_, obj any) { handle(obj, false) },
		},
	})
	hub.PublishLeading(true)
	go ctrl.RunWithContext(ctx)
	require.True(t, cache.WaitForCacheSync(ctx.Done(), ctrl.HasSynced))
}

// recorders write Events as kube-controller-manager's Deployment and ReplicaSet controllers do
// (client-go's record package, core/v1 Events, source component the controller's name).
type recorders struct {
	deployments, replicaSets record.EventRecorder
}

func newRecorders(t *testing.T, client kubernetes.Interface) recorders {
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	t.Cleanup(b.Shutdown)
	return recorders{
		deployments: b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "deployment-controller"}),
		replicaSets: b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "replicaset-controller"}),
	}
}

// deploymentController acts as kube-controller-manager's Deployment and ReplicaSet controllers
// would, through client-go: it creates a ReplicaSet per revision with the Deployment's context
// propagated to it, scales ReplicaSets and writes their status and the Deployment's, and
// records the controllers' Events (ScalingReplicaSet with the controller's message,
// SuccessfulCreate/SuccessfulDelete). At the desired state it removes the Deployment's context,
// as the seed asks.
type deploymentController struct {
	t      *testing.T
	client kubernetes.Interface
	ctx    context.Context
	rec    recorders
	name   string
}

func (c deploymentController) deployment() *appsv1.Deployment {
	d, err := c.client.AppsV1().Deployments("default").Get(c.ctx, c.name, metav1.GetOptions{})
	require.NoError(c.t, err)
	return d
}

// create creates the Deployment with replicas and the user's context, if valid.
func (c deploymentController) create(replicas int32, sc trace.SpanContext) *appsv1.Deployment {
	labels := map[string]string{"app": c.name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}},
		},
	}
	if sc.IsValid() { // binary form, as the original webhook wrote it
		objecttrace.EncodeContextIntoObject(trace.ContextWithSpanContext(c.ctx, sc), d, objecttrace.EncodeOptions{Encoding: objecttrace.EncodingBinary})
	}
	d, err := c.client.AppsV1().Deployments("default").Create(c.ctx, d, metav1.CreateOptions{})
	require.NoError(c.t, err)
	return d
}

// newReplicaSet creates revision rev's ReplicaSet with the Deployment's context (a child span
// of it: the controller's work), records the revision on the Deployment and its observed
// generation in its status, and records the scale-up Event.
func (c deploymentController) newReplicaSet(rev int, replicas int32) (*appsv1.ReplicaSet, trace.SpanContext) {
	rs, sc, d := c.createReplicaSet(rev, replicas)
	c.rec.deployments.Eventf(d, corev1.EventTypeNormal, reasonScaling, "Scaled up replica set %s from 0 to %d", rs.Name, replicas)
	return rs, sc
}

// createReplicaSet is newReplicaSet without the Event; it returns the Deployment as written.
func (c deploymentController) createReplicaSet(rev int, replicas int32) (*appsv1.ReplicaSet, trace.SpanContext, *appsv1.Deployment) {
	d := c.deployment()
	yes := true
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%d", c.name, rev), Namespace: "default",
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
	d, err = c.client.AppsV1().Deployments("default").UpdateStatus(c.ctx, d, metav1.UpdateOptions{})
	require.NoError(c.t, err)
	return rs, sc, d
}

// scale sets a ReplicaSet's spec (recording the Deployment controller's Event when it changes)
// and then its status, as the ReplicaSet controller reports its Pods (with its Event).
func (c deploymentController) scale(name string, spec, replicas, available int32) {
	rs, err := c.client.AppsV1().ReplicaSets("default").Get(c.ctx, name, metav1.GetOptions{})
	require.NoError(c.t, err)
	from := replicas32(rs.Spec.Replicas)
	rs.Spec.Replicas = &spec
	rs, err = c.client.AppsV1().ReplicaSets("default").Update(c.ctx, rs, metav1.UpdateOptions{})
	require.NoError(c.t, err)
	if from != spec {
		dir := "up"
		if spec < from {
			dir = "down"
		}
		c.rec.deployments.Eventf(c.deployment(), corev1.EventTypeNormal, reasonScaling, "Scaled %s replica set %s from %d to %d", dir, name, from, spec)
	}
	old := rs.Status.Replicas
	rs.Status.Replicas, rs.Status.AvailableReplicas, rs.Status.ReadyReplicas = replicas, available, available
	rs.Status.ObservedGeneration = rs.Generation
	_, err = c.client.AppsV1().ReplicaSets("default").UpdateStatus(c.ctx, rs, metav1.UpdateOptions{})
	require.NoError(c.t, err)
	switch {
	case replicas > old:
		c.rec.replicaSets.Eventf(rs, corev1.EventTypeNormal, reasonSuccessfulCreate, "Created pod: %s-%d", name, replicas)
	case replicas < old:
		c.rec.replicaSets.Eventf(rs, corev1.EventTypeNormal, reasonSuccessfulDelete, "Deleted pod: %s-%d", name, old)
	}
}

func replicas32(p *int32) int32 { return replicas(p) }

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

// userUpdate changes the template (a new desired state) with a new context, or none.
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

// rolloutOutcomes lists the rollout traces' Deployments, generations and outcomes, for failure
// messages and checks.
func rolloutOutcomes(sink *consumertest.TracesSink) []string {
	var out []string
	for _, td := range sink.AllTraces() {
		root := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		if root.Name() != rolloutSpanName {
			continue
		}
		n, _ := root.Attributes().Get(attr.ObjectName)
		g, _ := root.Attributes().Get(attr.LifecycleGeneration)
		o, _ := root.Attributes().Get(attr.LifecycleOutcome)
		out = append(out, fmt.Sprintf("%s/%d: %s", n.Str(), g.Int(), o.Str()))
	}
	return out
}

// rolloutTraces returns the rollout traces of Deployment name the sink holds, in the order
// they were emitted.
func rolloutTraces(sink *consumertest.TracesSink, name string) []ptrace.SpanSlice {
	var out []ptrace.SpanSlice
	for _, td := range sink.AllTraces() {
		spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		root := spans.At(0)
		n, _ := root.Attributes().Get(attr.ObjectName)
		if root.Name() == rolloutSpanName && n.Str() == name {
			out = append(out, spans)
		}
	}
	return out
}

// rolloutRig is a real API server, the Event publisher standing for kube_events, and the
// receiver with Deployment in kinds subscribed to the hub.
type rolloutRig struct {
	client kubernetes.Interface
	rec    recorders
	sink   *consumertest.TracesSink
	tel    *componenttest.Telemetry
	ctx    context.Context
}

func startRolloutRig(t *testing.T, tweak func(*Config)) rolloutRig {
	cluster := kubecluster.Start(t)
	rc, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	ext := &hubExtension{}
	id := component.MustNewID("trace_context")
	cfg := createDefaultConfig().(*Config)
	cfg.Kubeconfig, cfg.Kinds, cfg.TraceContext = cluster.Kubeconfig, []Kind{KindDeployment}, &id
	if tweak != nil {
		tweak(cfg)
	}
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	sink := &consumertest.TracesSink{}
	r, err := newReceiver(set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(ctx, hubHost{id: ext}))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	publishEvents(ctx, t, client, &ext.Hub)
	return rolloutRig{client: client, rec: newRecorders(t, client), sink: sink, tel: tel, ctx: ctx}
}

func (g rolloutRig) controller(t *testing.T, name string) deploymentController {
	return deploymentController{t: t, client: g.client, ctx: g.ctx, rec: g.rec, name: name}
}

// reads returns the rollout GETs the receiver counted, by resource.
func (g rolloutRig) reads(t *testing.T) map[string]int64 {
	out := map[string]int64{}
	m, err := g.tel.GetMetric("otelcol_receiver_kube_lifecycle_rollout_reads")
	if err != nil {
		return out
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok)
	for _, dp := range sum.DataPoints {
		v, _ := dp.Attributes.Value("resource")
		out[v.AsString()] += dp.Value
	}
	return out
}

// TestRolloutsAgainstAPIServer runs the receiver as the events collector does (Deployment in
// kinds, following the Events trace_context's hub hands it) against a real kube-apiserver
// while a test client acts as the Deployment and ReplicaSet controllers, their Events
// included: a traced creation, a traced rolling update whose context replaces the first, an
// untraced update that fails its progress deadline. Every rollout trace is checked for ids,
// parent or link, times and end.
func TestRolloutsAgainstAPIServer(t *testing.T) {
	g := startRolloutRig(t, nil)
	c := g.controller(t, "web")
	sink := g.sink

	// 1. creation, with the user's context
	userSC := spanContext(7)
	began1 := time.Now()
	d := c.create(2, userSC)
	require.NotEmpty(t, d.UID)
	rs1, rs1SC := c.newReplicaSet(1, 2)
	assert.Equal(t, userSC.TraceID(), rs1SC.TraceID())
	c.scale(rs1.Name, 2, 2, 2)
	require.Never(t, func() bool { return len(rolloutTraces(sink, "web")) > 0 }, 1500*time.Millisecond, 50*time.Millisecond,
		"not at its desired state yet: %v", rolloutOutcomes(sink))
	done1 := time.Now()
	c.status(2, 2, 2, nil, true)
	require.Eventually(t, func() bool { return len(rolloutTraces(sink, "web")) == 1 }, 40*time.Second, 50*time.Millisecond, "%v %v", rolloutOutcomes(sink), g.reads(t))
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
	require.Eventually(t, func() bool { return len(rolloutTraces(sink, "web")) == 2 }, 40*time.Second, 50*time.Millisecond, "%v", rolloutOutcomes(sink))
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
	require.Eventually(t, func() bool { return len(rolloutTraces(sink, "web")) == 3 }, 40*time.Second, 50*time.Millisecond, "%v", rolloutOutcomes(sink))

	traces := rolloutTraces(sink, "web")
	within := func(what string, got pcommon.Timestamp, from, to time.Time) {
		t.Helper()
		gt := got.AsTime()
		assert.False(t, gt.Before(from.Truncate(time.Second)) || gt.After(to), "%s %s not within [%s, %s]", what, gt, from, to)
	}
	str := func(s ptrace.Span, k string) string { v, _ := s.Attributes().Get(k); return v.AsString() }
	// the ids of a trace without a context: of the generation the rollout began with
	own := func(root ptrace.Span) (pcommon.TraceID, pcommon.SpanID) {
		g, _ := root.Attributes().Get(attr.LifecycleGeneration)
		sum := ids(string(d.UID), g.Int(), "root")
		return pcommon.TraceID(sum[:16]), pcommon.SpanID(sum[16:24])
	}

	// 1: the user's trace, one ReplicaSet scaled up, linked to the context it carries
	require.Len(t, traces, 3, "every rollout traced once")
	spans := traces[0]
	require.Equal(t, 2, spans.Len())
	root := spans.At(0)
	_, rootID := own(root)
	assert.Equal(t, pcommon.TraceID(userSC.TraceID()), root.TraceID())
	assert.Equal(t, pcommon.SpanID(userSC.SpanID()), root.ParentSpanID())
	assert.Equal(t, rootID, root.SpanID())
	assert.Equal(t, outcomeAvailable, str(root, attr.LifecycleOutcome))
	assert.Equal(t, "deployment", str(root, attr.LifecycleParent))
	// the start is the scale-up Event's time; the end an observation: not before its write
	within("rollout 1 start", root.StartTimestamp(), began1, root.EndTimestamp().AsTime())
	within("rollout 1 end", root.EndTimestamp(), done1, ended1)
	up := spans.At(1)
	assert.Equal(t, scaleUpSpanName, up.Name())
	assert.Equal(t, rs1.Name, str(up, attr.ObjectName))
	assert.Equal(t, root.SpanID(), up.ParentSpanID())
	require.Equal(t, 1, up.Links().Len())
	assert.Equal(t, pcommon.SpanID(rs1SC.SpanID()), up.Links().At(0).SpanID())

	// 2: the update's own context; rs2 scaled up, rs1 scaled down
	spans = traces[1]
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
	require.Equal(t, 1, byName[rs2.Name].Links().Len())
	assert.Equal(t, pcommon.SpanID(rs2SC.SpanID()), byName[rs2.Name].Links().At(0).SpanID())
	assert.Equal(t, scaleDownSpanName, byName[rs1.Name].Name())
	within("rs1 scale-down start", byName[rs1.Name].StartTimestamp(), began2, end2)
	within("rs1 scaled down", byName[rs1.Name].EndTimestamp(), down2, end2)

	// 3: no context: a trace of its own, ended with an error at the condition's time
	spans = traces[2]
	root = spans.At(0)
	trace3, root3 := own(root)
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

	// the generations the rollouts began with: each a later one
	gens := make([]int64, 0, len(traces))
	for _, spans := range traces {
		g, _ := spans.At(0).Attributes().Get(attr.LifecycleGeneration)
		gens = append(gens, g.Int())
	}
	assert.True(t, gens[0] < gens[1] && gens[1] < gens[2] && d3.Generation <= gens[2], "%v", gens)
	assert.LessOrEqual(t, d2.Generation, gens[1])
	t.Logf("rollout GETs for three rollouts: %v", g.reads(t))
}

// TestRolloutTimeoutDeletionAndReadBound: a Deployment deleted mid-rollout ends as deleted at
// the next read; a rollout that never progresses is read at most rollout_max_reads times (a GET
// of the Deployment and of its ReplicaSet each) and ends at rollout_timeout; an Event about a
// ReplicaSet no followed Deployment named costs no GET.
func TestRolloutTimeoutDeletionAndReadBound(t *testing.T) {
	const maxReads = 3
	g := startRolloutRig(t, func(cfg *Config) {
		// reads 1 s, 2 s and 4 s apart spend the budget before the timeout
		cfg.RolloutTimeout, cfg.RolloutMaxReads = 12*time.Second, maxReads
	})
	outcome := func(name string) (string, ptrace.StatusCode, ptrace.SpanSlice) {
		l := rolloutTraces(g.sink, name)
		require.Len(t, l, 1, name)
		o, _ := l[0].At(0).Attributes().Get(attr.LifecycleOutcome)
		return o.Str(), l[0].At(0).Status().Code(), l[0]
	}

	gone := g.controller(t, "gone")
	gone.create(1, trace.SpanContext{})
	gone.newReplicaSet(1, 1)
	require.Eventually(t, func() bool { return g.reads(t)["deployments"] >= 1 }, 20*time.Second, 20*time.Millisecond, "followed")
	require.NoError(t, g.client.AppsV1().Deployments("default").Delete(g.ctx, "gone", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return len(rolloutTraces(g.sink, "gone")) == 1 }, 20*time.Second, 50*time.Millisecond, "%v", rolloutOutcomes(g.sink))
	o, code, _ := outcome("gone")
	assert.Equal(t, outcomeDeleted, o)
	assert.Equal(t, ptrace.StatusCodeError, code)

	before := g.reads(t)
	orphan := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "default", UID: "orphan-uid"}}
	g.rec.replicaSets.Eventf(orphan, corev1.EventTypeNormal, reasonSuccessfulCreate, "Created pod: orphan-x")
	stuck := g.controller(t, "stuck")
	stuck.create(1, trace.SpanContext{})
	rs, _ := stuck.newReplicaSet(1, 1)
	stuck.scale(rs.Name, 1, 1, 0)
	require.Eventually(t, func() bool { return len(rolloutTraces(g.sink, "stuck")) == 1 }, 30*time.Second, 50*time.Millisecond, "%v", rolloutOutcomes(g.sink))
	o, code, spans := outcome("stuck")
	assert.Equal(t, outcomeTimeout, o)
	assert.Equal(t, ptrace.StatusCodeError, code)
	require.Equal(t, 2, spans.Len(), "the scale-up span, not reached")
	assert.Equal(t, spans.At(0).EndTimestamp(), spans.At(1).EndTimestamp())
	after := g.reads(t)
	t.Logf("GETs: deletion case %v; stuck rollout %d Deployment, %d ReplicaSet", before,
		after["deployments"]-before["deployments"], after["replicasets"]-before["replicasets"])
	assert.Equal(t, int64(maxReads), after["deployments"]-before["deployments"], "Deployment GETs: the budget, and none for the orphan Event")
	assert.Equal(t, int64(maxReads), after["replicasets"]-before["replicasets"], "ReplicaSet GETs: one per read")
}

// TestRolloutCompleteBeforeItsFirstRead: a rollout that reaches its desired state before the
// receiver's first read (the Event arrives after the controller's last write, as on a fast
// node where the new Pods are Ready within the read's debounce) is traced whole, from the
// Event to the completion the Deployment's Progressing condition records, with one read.
func TestRolloutCompleteBeforeItsFirstRead(t *testing.T) {
	g := startRolloutRig(t, nil)
	c := g.controller(t, "quick")
	userSC := spanContext(9)
	began := time.Now()
	c.create(2, userSC)
	rs, _, _ := c.createReplicaSet(1, 2)
	c.scale(rs.Name, 2, 2, 2)
	completed := metav1.NewTime(time.Now().Truncate(time.Second)) // as the API stores it
	c.status(2, 2, 2, &appsv1.DeploymentCondition{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", LastUpdateTime: completed, LastTransitionTime: completed,
	}, false) // the context stays (nothing on a cluster removes it; removed, the read could not see it: design.md, known gaps)
	c.rec.deployments.Eventf(c.deployment(), corev1.EventTypeNormal, reasonScaling, "Scaled up replica set %s from 0 to %d", rs.Name, 2)
	require.Eventually(t, func() bool { return len(rolloutTraces(g.sink, "quick")) == 1 }, 20*time.Second, 50*time.Millisecond, "%v %v", rolloutOutcomes(g.sink), g.reads(t))
	require.Never(t, func() bool { return len(rolloutTraces(g.sink, "quick")) > 1 }, 2*time.Second, 100*time.Millisecond, "traced once")

	spans := rolloutTraces(g.sink, "quick")[0]
	require.Equal(t, 2, spans.Len(), "the rollout and its ReplicaSet's scale-up")
	root, up := spans.At(0), spans.At(1)
	str := func(s ptrace.Span, k string) string { v, _ := s.Attributes().Get(k); return v.AsString() }
	assert.Equal(t, pcommon.TraceID(userSC.TraceID()), root.TraceID(), "the context the Deployment carried at its creation")
	assert.Equal(t, outcomeAvailable, str(root, attr.LifecycleOutcome))
	start, end := root.StartTimestamp().AsTime(), root.EndTimestamp().AsTime()
	assert.False(t, start.Before(began.Truncate(time.Second)), "starts at the Event (%s), not before the test (%s)", start, began)
	wantEnd := completed.UTC() // the condition's time, or the start when that second began before it
	if start.After(wantEnd) {
		wantEnd = start
	}
	assert.Equal(t, wantEnd, end.UTC())
	assert.Equal(t, scaleUpSpanName, up.Name())
	assert.Equal(t, rs.Name, str(up, attr.ObjectName))
	assert.Equal(t, root.EndTimestamp(), up.EndTimestamp())
	assert.Equal(t, int64(1), g.reads(t)["deployments"], "one read")
}
