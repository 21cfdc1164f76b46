// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
)

const depUID = types.UID("d0000000-0000-4000-8000-000000000001")

// depState is a Deployment as the watch shows it: generation, the generation the controller
// observed, revision, replicas wanted and (updated, available, total) in its status.
func depState(gen, observed int64, revision string, want, updated, available, total int32, ann map[string]string) *appsv1.Deployment {
	// the desired state changes with the generation here; see the bumped case for the other way
	a := map[string]string{revisionAnnotation: revision, specAnnotation: "s" + strconv.FormatInt(gen, 10)}
	for k, v := range ann {
		a[k] = v
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: depUID, Generation: gen, Annotations: a},
		Spec:       appsv1.DeploymentSpec{Replicas: &want},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: observed, UpdatedReplicas: updated, AvailableReplicas: available, Replicas: total},
	}
}

// rsState is a ReplicaSet of the Deployment: revision, created at sec, spec replicas, status
// replicas and available.
func rsState(name, revision string, sec int, spec, replicas, available int32) *appsv1.ReplicaSet {
	yes := true
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "shop", UID: types.UID("rs-" + name), CreationTimestamp: at(sec),
			Annotations:     map[string]string{revisionAnnotation: revision},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: depUID, Controller: &yes}},
		},
		Spec:   appsv1.ReplicaSetSpec{Replicas: &spec},
		Status: appsv1.ReplicaSetStatus{Replicas: replicas, AvailableReplicas: available},
	}
}

// step is one watch event at a second after t0.
type step struct {
	sec     int
	d       *appsv1.Deployment
	sets    []*appsv1.ReplicaSet
	create  bool // a Deployment event (a ReplicaSet event otherwise)
	initial bool
	deleted bool
	expire  bool
	// announced: a live Event of this term announced the rollout at second began
	announced bool
	began     int
}

type wantSet struct {
	name       string
	up         bool
	start, end int
	target     int64
	link       bool // to the ReplicaSet's own context
}

func TestRolloutTracker(t *testing.T) {
	t.Parallel()
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0xde, 1}, SpanID: trace.SpanID{0xde, 2}, TraceFlags: trace.FlagsSampled, Remote: true})
	rsSC := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0xde, 1}, SpanID: trace.SpanID{0x5e, 3}, TraceFlags: trace.FlagsSampled, Remote: true})
	seedKey := map[string]string{objecttrace.ContextAnnotation: objecttrace.FormatTraceparent(sc)}
	asyncKey := map[string]string{objecttrace.TraceparentAnnotation: objecttrace.FormatTraceparent(sc)}
	old3 := rsState("web-1", "1", -100, 3, 3, 3)
	withSC := func(rs *appsv1.ReplicaSet, s trace.SpanContext) *appsv1.ReplicaSet {
		rs.Annotations[objecttrace.ContextAnnotation] = objecttrace.FormatTraceparent(s)
		return rs
	}
	// a rolling update of 3 replicas: the user's update at 0, the new ReplicaSet at 1, old
	// scaled down from 2, new available at 3, old gone at 4, status complete at 5
	rolling := func(ann, doneAnn map[string]string) []step {
		return []step{
			{sec: 0, d: depState(2, 1, "1", 3, 3, 3, 3, ann), sets: []*appsv1.ReplicaSet{old3}, create: true},
			{sec: 1, d: depState(2, 2, "2", 3, 1, 3, 4, ann), sets: []*appsv1.ReplicaSet{old3, withSC(rsState("web-2", "2", 1, 1, 1, 0), rsSC)}, create: true},
			{sec: 2, d: depState(2, 2, "2", 3, 1, 3, 4, ann), sets: []*appsv1.ReplicaSet{rsState("web-1", "1", -100, 2, 3, 3), rsState("web-2", "2", 1, 3, 3, 1)}},
			{sec: 3, d: depState(2, 2, "2", 3, 3, 3, 4, ann), sets: []*appsv1.ReplicaSet{rsState("web-1", "1", -100, 0, 1, 1), rsState("web-2", "2", 1, 3, 3, 3)}},
			{sec: 4, d: depState(2, 2, "2", 3, 3, 3, 4, ann), sets: []*appsv1.ReplicaSet{rsState("web-1", "1", -100, 0, 0, 0), rsState("web-2", "2", 1, 3, 3, 3)}},
			// the controller's status update that reaches the desired state removes or replaces
			// the context (the seed): the trace keeps the first one
			{sec: 5, d: depState(2, 2, "2", 3, 3, 3, 3, doneAnn), sets: []*appsv1.ReplicaSet{rsState("web-1", "1", -100, 0, 0, 0), rsState("web-2", "2", 1, 3, 3, 3)}, create: true},
			{sec: 6, d: depState(2, 2, "2", 3, 3, 3, 3, doneAnn), sets: []*appsv1.ReplicaSet{rsState("web-1", "1", -100, 0, 0, 0), rsState("web-2", "2", 1, 3, 3, 3)}, create: true},
		}
	}
	rollingSets := []wantSet{{"web-2", true, 1, 3, 3, true}, {"web-1", false, 2, 4, 0, false}}
	deadline := depState(2, 2, "2", 3, 1, 3, 4, nil)
	deadline.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", LastUpdateTime: at(7)}}
	deleting := depState(2, 2, "2", 3, 1, 3, 4, nil)
	deleting.DeletionTimestamp = &metav1.Time{Time: at(3).Time}
	complete := depState(2, 2, "2", 3, 3, 3, 3, nil)
	// the controller's revision annotation and the context's removal bump the generation, not
	// the desired state
	bumped := func(gen int64, d *appsv1.Deployment) *appsv1.Deployment {
		d.Generation, d.Status.ObservedGeneration = gen, gen
		return d
	}
	doneSets := []*appsv1.ReplicaSet{rsState("web-1", "1", -100, 0, 0, 0), rsState("web-2", "2", -50, 3, 3, 3)}
	// complete, the controller's Progressing condition updated at sec
	completeAt := func(sec int) *appsv1.Deployment {
		d := depState(2, 2, "2", 3, 3, 3, 3, nil)
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", LastUpdateTime: at(sec)}}
		return d
	}
	quickSets := []*appsv1.ReplicaSet{rsState("web-1", "1", -100, 0, 0, 0), rsState("web-2", "2", 1, 3, 3, 3)}

	tests := []struct {
		name       string
		steps      []step
		noRoom     bool // max_pending 0
		trustNone  bool // trace_context trusts no context (trust.namespaces names another)
		pending    int  // rollouts held at the end
		wantNone   bool
		wantDrop   bool
		outcome    string
		start, end int
		parent     string
		wantParent bool // parented under sc
		wantLink   bool
		sets       []wantSet
	}{
		{
			name: "rolling update, no context: a trace of its own", steps: rolling(nil, nil),
			outcome: outcomeAvailable, start: 0, end: 5, parent: "none", sets: rollingSets,
		},
		{
			name: "seed's key: parent, kept when the end removes it", steps: rolling(seedKey, nil),
			outcome: outcomeAvailable, start: 0, end: 5, parent: "deployment", wantParent: true, sets: rollingSets,
		},
		{
			name: "async key: link", steps: rolling(asyncKey, map[string]string{objecttrace.TraceparentAnnotation: "00-0000000000000000000000000000000a-000000000000000b-01"}),
			outcome: outcomeAvailable, start: 0, end: 5, parent: "deployment", wantLink: true, sets: rollingSets,
		},
		{
			name: "untrusted: neither the Deployment's context nor the ReplicaSet's is used", steps: rolling(seedKey, nil), trustNone: true,
			outcome: outcomeAvailable, start: 0, end: 5, parent: "none",
			sets: []wantSet{{"web-2", true, 1, 3, 3, false}, {"web-1", false, 2, 4, 0, false}},
		},
		{
			name: "annotation writes bump the generation: one rollout",
			steps: []step{
				{sec: 0, d: depState(2, 1, "1", 3, 3, 3, 3, nil), sets: []*appsv1.ReplicaSet{old3}, create: true},
				{sec: 1, d: bumped(3, depState(2, 2, "2", 3, 1, 3, 4, nil)), sets: []*appsv1.ReplicaSet{old3, rsState("web-2", "2", 1, 1, 1, 0)}, create: true},
				{sec: 5, d: bumped(4, depState(2, 2, "2", 3, 3, 3, 3, nil)), sets: doneSets, create: true},
				{sec: 6, d: bumped(5, depState(2, 2, "2", 3, 3, 3, 3, nil)), sets: doneSets, create: true},
			},
			outcome: outcomeAvailable, start: 0, end: 5, parent: "none",
			sets: []wantSet{{"web-2", true, 1, 5, 3, false}, {"web-1", false, 5, 5, 0, false}},
		},
		{
			name: "first seen mid-rollout (first list): starts at the new ReplicaSet's creation",
			steps: []step{
				{sec: 10, d: depState(2, 2, "2", 3, 1, 3, 4, nil), sets: []*appsv1.ReplicaSet{old3, rsState("web-2", "2", 4, 1, 1, 0)}, create: true, initial: true},
				{sec: 12, d: complete, sets: doneSets, create: true},
			},
			outcome: outcomeAvailable, start: 4, end: 12, parent: "none",
			// the old ReplicaSet's scale-down is first seen at 12
			sets: []wantSet{{"web-2", true, 4, 12, 3, false}, {"web-1", false, 12, 12, 0, false}},
		},
		{
			name:     "at its desired state when first seen: no trace, later updates ignored",
			steps:    []step{{sec: 1, d: complete, sets: doneSets, create: true, initial: true}, {sec: 2, d: complete, sets: doneSets, create: true}},
			wantNone: true,
		},
		{
			name: "announced by a live Event, at its desired state at the first read: traced from the Event to the completion",
			steps: []step{
				{sec: 6, d: completeAt(4), sets: quickSets, create: true, announced: true, began: 0},
				{sec: 7, d: completeAt(4), sets: quickSets, create: true, announced: true, began: 5},
			},
			outcome: outcomeAvailable, start: 0, end: 4, parent: "none",
			sets: []wantSet{{"web-1", false, 0, 4, 0, false}, {"web-2", true, 1, 4, 3, false}},
		},
		{
			name: "announced, complete at the first read, no condition: ends at the read",
			steps: []step{
				{sec: 6, d: complete, sets: quickSets, create: true, announced: true, began: 2},
			},
			outcome: outcomeAvailable, start: 2, end: 6, parent: "none",
			sets: []wantSet{{"web-1", false, 2, 6, 0, false}, {"web-2", true, 2, 6, 3, false}},
		},
		{
			name: "announced, complete, the condition a second before the Event: clamped to the Event",
			steps: []step{
				{sec: 6, d: completeAt(2), sets: quickSets, create: true, announced: true, began: 3},
			},
			outcome: outcomeAvailable, start: 3, end: 3, parent: "none",
			sets: []wantSet{{"web-1", false, 3, 3, 0, false}, {"web-2", true, 3, 3, 3, false}},
		},
		{
			name:     "replayed (first list) and complete: no trace, even with the Event's time",
			steps:    []step{{sec: 6, d: completeAt(4), sets: quickSets, create: true, initial: true, announced: true, began: 0}},
			wantNone: true,
		},
		{
			name:     "announced longer than rollout_timeout ago and complete: no trace",
			steps:    []step{{sec: 70, d: completeAt(4), sets: quickSets, create: true, announced: true, began: 0}},
			wantNone: true,
		},
		{
			name: "progress deadline exceeded: error at the condition's time",
			steps: []step{
				{sec: 0, d: depState(2, 1, "1", 3, 3, 3, 3, nil), sets: []*appsv1.ReplicaSet{old3}, create: true},
				{sec: 8, d: deadline, sets: []*appsv1.ReplicaSet{old3, rsState("web-2", "2", 1, 1, 1, 0)}, create: true},
			},
			outcome: outcomeProgressDeadline, start: 0, end: 7, parent: "none",
			sets: []wantSet{{"web-1", false, 0, 7, 0, false}, {"web-2", true, 1, 7, 3, false}},
		},
		{
			name: "superseded by the next generation",
			steps: []step{
				{sec: 0, d: depState(2, 1, "1", 3, 3, 3, 3, nil), sets: []*appsv1.ReplicaSet{old3}, create: true},
				{sec: 2, d: depState(3, 2, "2", 3, 1, 3, 4, nil), sets: []*appsv1.ReplicaSet{old3}, create: true},
			},
			outcome: outcomeSuperseded, start: 0, end: 2, parent: "none", pending: 1,
		},
		{
			name: "gracefully deleted",
			steps: []step{
				{sec: 0, d: depState(2, 1, "1", 3, 3, 3, 3, nil), sets: []*appsv1.ReplicaSet{old3}, create: true},
				{sec: 3, d: deleting, sets: []*appsv1.ReplicaSet{old3}, create: true},
			},
			outcome: outcomeDeleted, start: 0, end: 3, parent: "none",
		},
		{
			name: "deleted",
			steps: []step{
				{sec: 0, d: depState(2, 1, "1", 3, 3, 3, 3, nil), sets: []*appsv1.ReplicaSet{old3}, create: true},
				{sec: 4, deleted: true},
			},
			outcome: outcomeDeleted, start: 0, end: 4, parent: "none",
		},
		{
			name: "timeout",
			steps: []step{
				{sec: 0, d: depState(2, 1, "1", 3, 3, 3, 3, nil), sets: []*appsv1.ReplicaSet{old3}, create: true},
				{sec: 59, expire: true},
				{sec: 60, expire: true},
			},
			outcome: outcomeTimeout, start: 0, end: 60, parent: "none",
		},
		{
			name: "a ReplicaSet event does not start a rollout",
			steps: []step{
				{sec: 0, d: depState(2, 1, "1", 3, 3, 3, 3, nil), sets: []*appsv1.ReplicaSet{old3}},
			},
			wantNone: true,
		},
		{
			name:     "max_pending reached",
			steps:    []step{{sec: 0, d: depState(2, 1, "1", 3, 3, 3, 3, nil), sets: []*appsv1.ReplicaSet{old3}, create: true}},
			noRoom:   true,
			wantNone: true, wantDrop: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			now := t0
			maxActive := 100
			if tt.noRoom {
				maxActive = 0
			}
			tr := newRolloutTracker(maxActive, time.Minute, func() time.Time { return now })
			if tt.trustNone {
				tr.trusts = func(string, string) bool { return false }
			}
			var ended []finishedRollout
			dropped := false
			for _, s := range tt.steps {
				now = t0.Add(time.Duration(s.sec) * time.Second)
				switch {
				case s.deleted:
					ended = append(ended, tr.deleted(depUID)...)
				case s.expire:
					ended = append(ended, tr.expire()...)
				case s.announced:
					e, d := tr.observeFrom(s.d, s.sets, s.create, s.initial, at(s.began).Time)
					ended, dropped = append(ended, e...), dropped || d
				default:
					e, d := tr.observe(s.d, s.sets, s.create, s.initial)
					ended, dropped = append(ended, e...), dropped || d
				}
			}
			assert.Equal(t, tt.wantDrop, dropped)
			if tt.wantNone {
				assert.Empty(t, ended)
				assert.Zero(t, tr.pending())
				return
			}
			require.Len(t, ended, 1)
			assert.Equal(t, tt.pending, tr.pending())
			checkRollout(t, buildRollout(ended[0]), tt.outcome, tt.start, tt.end, tt.parent, tt.wantParent, tt.wantLink, sc, tt.sets)
		})
	}
}

// checkRollout checks a rollout trace: ids, parent or link, times, outcome and the ReplicaSet spans.
func checkRollout(t *testing.T, td ptrace.Traces, outcome string, start, end int, parent string, wantParent, wantLink bool, sc trace.SpanContext, sets []wantSet) {
	t.Helper()
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	require.Equal(t, 1+len(sets), spans.Len())
	root := spans.At(0)
	assert.Equal(t, rolloutSpanName, root.Name())
	sum := ids(string(depUID), 2, "root")
	wantTrace := pcommon.TraceID(sum[:16])
	if wantParent {
		wantTrace = pcommon.TraceID(sc.TraceID())
		assert.Equal(t, pcommon.SpanID(sc.SpanID()), root.ParentSpanID())
	} else {
		assert.True(t, root.ParentSpanID().IsEmpty())
	}
	assert.Equal(t, wantTrace, root.TraceID())
	assert.Equal(t, pcommon.SpanID(sum[16:24]), root.SpanID())
	if wantLink {
		require.Equal(t, 1, root.Links().Len())
		assert.Equal(t, pcommon.SpanID(sc.SpanID()), root.Links().At(0).SpanID())
	} else {
		assert.Equal(t, 0, root.Links().Len())
	}
	assert.Equal(t, at(start).UTC(), root.StartTimestamp().AsTime())
	assert.Equal(t, at(end).UTC(), root.EndTimestamp().AsTime())
	str := func(s ptrace.Span, k string) string { v, _ := s.Attributes().Get(k); return v.AsString() }
	assert.Equal(t, outcome, str(root, attr.LifecycleOutcome))
	assert.Equal(t, parent, str(root, attr.LifecycleParent))
	assert.Equal(t, "Deployment", str(root, attr.ObjectKind))
	assert.Equal(t, "web", str(root, attr.ObjectName))
	assert.Equal(t, "2", str(root, attr.LifecycleGeneration))
	wantErr := outcome != outcomeAvailable && outcome != outcomeSuperseded
	assert.Equal(t, wantErr, root.Status().Code() == ptrace.StatusCodeError)
	for i, w := range sets {
		s := spans.At(1 + i)
		assert.Equal(t, w.name, str(s, attr.ObjectName), "span %d", i)
		assert.Equal(t, "ReplicaSet", str(s, attr.ObjectKind))
		assert.Equal(t, map[bool]string{true: scaleUpSpanName, false: scaleDownSpanName}[w.up], s.Name(), w.name)
		assert.Equal(t, wantTrace, s.TraceID())
		assert.Equal(t, root.SpanID(), s.ParentSpanID())
		id := ids(string(depUID), 2, "rs-"+w.name)
		assert.Equal(t, pcommon.SpanID(id[:8]), s.SpanID())
		assert.Equal(t, at(w.start).UTC(), s.StartTimestamp().AsTime(), "%s start", w.name)
		assert.Equal(t, at(w.end).UTC(), s.EndTimestamp().AsTime(), "%s end", w.name)
		assert.Equal(t, strconv.FormatInt(w.target, 10), str(s, attr.LifecycleReplicas))
		if assert.Equal(t, boolToLinks(w.link), s.Links().Len(), w.name) && w.link {
			assert.Equal(t, pcommon.SpanID{0x5e, 3}, s.Links().At(0).SpanID())
		}
	}
}

func boolToLinks(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTrimDeployment: the trimmed copy keeps the revision and a hash of the desired state, which
// changes with the template and not with other annotations.
func TestTrimDeployment(t *testing.T) {
	t.Parallel()
	three := int32(3)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: depUID, Generation: 4, Annotations: map[string]string{revisionAnnotation: "2", "other": "x"}},
		Spec:       appsv1.DeploymentSpec{Replicas: &three, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}},
	}
	a := trimDeployment(d)
	require.NotEmpty(t, a.Annotations[specAnnotation])
	assert.Equal(t, map[string]string{revisionAnnotation: "2", specAnnotation: a.Annotations[specAnnotation]}, a.Annotations)
	assert.Empty(t, a.Spec.Template.Spec.Containers)
	d.Annotations["other"] = "y"
	assert.Equal(t, a.Annotations[specAnnotation], trimDeployment(d).Annotations[specAnnotation], "another annotation: the same desired state")
	d.Spec.Template.Spec.Containers[0].Image = "app:2"
	assert.NotEqual(t, a.Annotations[specAnnotation], trimDeployment(d).Annotations[specAnnotation])
}
