// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"encoding/json"
	"hash/fnv"
	"sort"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objspans"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
)

// Outcomes of a Deployment rollout trace (design.md rule 9); timeout and deleted are shared
// with Pods.
const (
	outcomeAvailable        = "available"
	outcomeProgressDeadline = "progress_deadline_exceeded"
	outcomeSuperseded       = "superseded"
)

// Span names of a rollout trace.
const (
	rolloutSpanName   = "Deployment rollout"
	scaleUpSpanName   = "ReplicaSet scale up"
	scaleDownSpanName = "ReplicaSet scale down"
)

// revisionAnnotation is the revision the Deployment controller writes on a Deployment and on
// its ReplicaSets: the new ReplicaSet is the one whose revision is the Deployment's.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// specAnnotation holds, on the receiver's trimmed copy of a Deployment only, a hash of its
// desired state (replicas and Pod template): a rollout is one desired state (design.md rule 7).
// Generations do not say it: the API server bumps a Deployment's generation on every annotation
// change too (the controller's revision, a trace context written or removed).
const specAnnotation = "otelcol-k8s.io/lifecycle-spec"

// specHash hashes a Deployment's desired state.
func specHash(d *appsv1.Deployment) string {
	b, _ := json.Marshal(struct {
		Replicas *int32                 `json:"r"`
		Template corev1.PodTemplateSpec `json:"t"`
	}{d.Spec.Replicas, d.Spec.Template})
	h := fnv.New64a()
	_, _ = h.Write(b)
	return strconv.FormatUint(h.Sum64(), 16)
}

// rollout is one Deployment generation on its way to its desired state (design.md rule 7).
type rollout struct {
	uid             types.UID
	namespace, name string
	spec            string // specHash
	generation      int64  // when the rollout began
	start           time.Time
	origin          origin
	sets            map[types.UID]*setProgress
}

// setProgress is a ReplicaSet taking part in a rollout: the new one scaling up, an old one
// scaling down (design.md rule 8).
type setProgress struct {
	uid       types.UID
	name      string
	isNew     bool
	firstSpec int32     // spec.replicas when first seen in the rollout
	began     time.Time // when it was first seen moving towards its target
	target    int32     // replicas it is scaled to: the Deployment's for the new one, 0 for old ones
	done      time.Time // when it reached its target (zero: not yet)
	sc        trace.SpanContext
}

// finishedRollout is a rollout trace ready to be emitted.
type finishedRollout struct {
	r       *rollout
	outcome string
	end     time.Time
}

// rolloutTracker follows Deployment rollouts from the Deployments and ReplicaSets read; safe
// for concurrent use.
type rolloutTracker struct {
	max     int
	timeout time.Duration
	now     func() time.Time
	// trusts says whether a context a Deployment carries is used (trace_context's trust, design.md
	// rule 3); nil: every context (no trace_context configured).
	trusts func(kind, namespace string) bool

	mu     sync.Mutex
	active map[types.UID]*rollout
	// ended is the desired state (specHash) of each Deployment whose last rollout is over
	// (traced or not): later updates with that desired state are ignored.
	ended map[types.UID]string
}

func newRolloutTracker(maxActive int, timeout time.Duration, now func() time.Time) *rolloutTracker {
	return &rolloutTracker{max: maxActive, timeout: timeout, now: now, active: map[types.UID]*rollout{}, ended: map[types.UID]string{}}
}

// reset forgets everything (a new leadership term relists).
func (t *rolloutTracker) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.active)
	clear(t.ended)
}

// pending is the number of rollouts held.
func (t *rolloutTracker) pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.active)
}

// observe takes a Deployment and its ReplicaSets as the watches show them now. create says
// the Deployment event may start a rollout (a Deployment event; a ReplicaSet event only moves
// one that is held); initial says it comes from the first list. It returns the rollouts that
// ended and whether a new one could not be held (max_pending).
func (t *rolloutTracker) observe(d *appsv1.Deployment, sets []*appsv1.ReplicaSet, create, initial bool) (ended []finishedRollout, dropped bool) {
	return t.observeFrom(d, sets, create, initial, time.Time{})
}

// holds says whether a rollout of the Deployment is open.
func (t *rolloutTracker) holds(uid types.UID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.active[uid] != nil
}

// observeFrom is observe with the time the rollout began when one begins now (not initial):
// the Event that announced it; zero: now.
func (t *rolloutTracker) observeFrom(d *appsv1.Deployment, sets []*appsv1.ReplicaSet, create, initial bool, began time.Time) (ended []finishedRollout, dropped bool) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	spec := d.Annotations[specAnnotation]
	r := t.active[d.UID]
	if r != nil && spec != r.spec { // a new desired state replaces the old one
		ended = append(ended, t.finish(r, outcomeSuperseded, now))
		r = nil
	}
	whole := false // a rollout begun and ended between the Event that announced it and this read
	if r == nil {
		if last, ok := t.ended[d.UID]; !create || ok && last == spec {
			return ended, false
		}
		if rolloutComplete(d, sets) {
			if initial || began.IsZero() || !began.Before(now) || now.Sub(began) >= t.timeout {
				t.ended[d.UID] = spec // at its desired state when first seen: nothing to trace
				return ended, false
			}
			whole = true // announced by a live Event of this term (design.md rule 7)
		}
		if len(t.active) >= t.max {
			return ended, true
		}
		r = &rollout{uid: d.UID, namespace: d.Namespace, name: d.Name, spec: spec, generation: d.Generation, start: now, sets: map[types.UID]*setProgress{}}
		if !initial && !began.IsZero() && began.Before(now) {
			r.start = began
		}
		if ns := newSet(d, sets); initial && ns != nil && ns.CreationTimestamp.Time.Before(now) {
			r.start = ns.CreationTimestamp.Time // first seen mid-rollout: its new ReplicaSet's creation
		}
		t.active[d.UID] = r
	}
	if !r.origin.sc.IsValid() { // the first context seen wins: the end of a trace replaces or removes it
		sc, scheme, _ := objecttrace.SpanContextFromAnnotations(d.Annotations)
		r.origin = origin{sc: sc, link: scheme == objecttrace.SchemeTraceparent, from: "deployment"}
		if !sc.IsValid() || t.trusts != nil && !t.trusts("Deployment", d.Namespace) {
			r.origin = origin{from: originNone}
		}
	}
	if d.DeletionTimestamp != nil {
		return append(ended, t.finish(r, outcomeDeleted, now)), false
	}
	if d.Status.ObservedGeneration < d.Generation {
		return ended, false // the controller has not acted on this generation yet
	}
	if whole {
		// what happened in between is not known apart: the ReplicaSets the Events named took
		// part from the beginning to the completion the Deployment's status records
		end := completedAt(d, r.start, now)
		t.progress(r, d, sets, end, true)
		return append(ended, t.finish(r, outcomeAvailable, end)), false
	}
	t.progress(r, d, sets, now, false)
	if at, failed := progressDeadline(d); failed {
		// condition times have second precision: one before the observed start is the start
		return append(ended, t.finish(r, outcomeProgressDeadline, clampTime(at, r.start, now))), false
	}
	if rolloutComplete(d, sets) {
		return append(ended, t.finish(r, outcomeAvailable, now)), false
	}
	return ended, false
}

// completedAt is when a complete Deployment reached its desired state: the Deployment
// controller's Progressing condition with reason NewReplicaSetAvailable is updated then;
// clamped to [start, now] (condition times have second precision), now without it.
func completedAt(d *appsv1.Deployment, start, now time.Time) time.Time {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionTrue && c.Reason == "NewReplicaSetAvailable" && !c.LastUpdateTime.IsZero() {
			return clampTime(c.LastUpdateTime.Time, start, now)
		}
	}
	return now
}

// deleted ends the rollout of a deleted Deployment.
func (t *rolloutTracker) deleted(uid types.UID) []finishedRollout {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.ended, uid)
	if r := t.active[uid]; r != nil {
		return []finishedRollout{t.finish(r, outcomeDeleted, t.now())}
	}
	return nil
}

// expire ends the rollouts that began more than timeout ago.
func (t *rolloutTracker) expire() []finishedRollout {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []finishedRollout
	for _, r := range t.active {
		if now.Sub(r.start) >= t.timeout {
			out = append(out, t.finish(r, outcomeTimeout, now))
		}
	}
	return out
}

func (t *rolloutTracker) finish(r *rollout, outcome string, end time.Time) finishedRollout {
	delete(t.active, r.uid)
	t.ended[r.uid] = r.spec
	return finishedRollout{r: r, outcome: outcome, end: end}
}

// progress records which ReplicaSets take part and when each reached its target (design.md
// rule 8). Called only once the controller observed the rollout's generation. whole: the
// rollout is first read at its end, and an old ReplicaSet already scaled down took part (the
// sets are those its Events named).
func (t *rolloutTracker) progress(r *rollout, d *appsv1.Deployment, sets []*appsv1.ReplicaSet, now time.Time, whole bool) {
	desired := replicas(d.Spec.Replicas)
	revision := d.Annotations[revisionAnnotation]
	for _, rs := range sets {
		isNew := revision != "" && rs.Annotations[revisionAnnotation] == revision
		spec := replicas(rs.Spec.Replicas)
		p := r.sets[rs.UID]
		if p == nil {
			if !isNew && spec == 0 && rs.Status.Replicas == 0 && !whole {
				continue // an old ReplicaSet already scaled down: not part of this rollout
			}
			p = &setProgress{uid: rs.UID, name: rs.Name, firstSpec: spec, began: r.start}
			if isNew && rs.CreationTimestamp.After(r.start) {
				p.began = rs.CreationTimestamp.Time
			}
			if sc, _, _ := objecttrace.SpanContextFromAnnotations(rs.Annotations); sc.IsValid() && (t.trusts == nil || t.trusts("ReplicaSet", rs.Namespace)) {
				p.sc = sc
			}
			r.sets[rs.UID] = p
		} else if !isNew && !p.isNew && spec < p.firstSpec && p.began.Equal(r.start) && p.done.IsZero() {
			p.began = now // the first scale-down step seen
		}
		p.isNew = isNew
		p.target = 0
		if isNew {
			p.target = desired
		}
		reached := spec == p.target && rs.Status.Replicas == p.target
		if isNew {
			reached = spec == desired && rs.Status.AvailableReplicas >= desired
		}
		if reached && p.done.IsZero() {
			p.done = now
		} else if !reached {
			p.done = time.Time{}
		}
	}
}

// newSet returns the Deployment's new ReplicaSet: the one with the Deployment's revision.
func newSet(d *appsv1.Deployment, sets []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	revision := d.Annotations[revisionAnnotation]
	if revision == "" {
		return nil
	}
	for _, rs := range sets {
		if rs.Annotations[revisionAnnotation] == revision {
			return rs
		}
	}
	return nil
}

// rolloutComplete says whether the Deployment is at its desired state (design.md rule 9, the
// seed's end of a trace): the controller observed its generation, the new ReplicaSet has the
// desired replicas available and every old one is scaled down.
func rolloutComplete(d *appsv1.Deployment, sets []*appsv1.ReplicaSet) bool {
	desired := replicas(d.Spec.Replicas)
	st := d.Status
	if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != desired || st.AvailableReplicas != desired || st.Replicas != desired {
		return false
	}
	ns := newSet(d, sets)
	if ns == nil || replicas(ns.Spec.Replicas) != desired || ns.Status.AvailableReplicas < desired {
		return false
	}
	for _, rs := range sets {
		if rs != ns && (replicas(rs.Spec.Replicas) != 0 || rs.Status.Replicas != 0) {
			return false
		}
	}
	return true
}

// progressDeadline reports a Progressing condition False with reason ProgressDeadlineExceeded,
// and its time.
func progressDeadline(d *appsv1.Deployment) (time.Time, bool) {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return c.LastUpdateTime.Time, true
		}
	}
	return time.Time{}, false
}

// replicas is a spec's replica count (nil means 1, as the API defaults it).
func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// buildRollout makes a rollout's trace (design.md rules 7-9): a root span for the rollout and
// one span per ReplicaSet that took part.
func buildRollout(f finishedRollout) ptrace.Traces {
	r := f.r
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/otelcol-k8s/otelcol-k8s/receiver/kubelifecyclereceiver")
	end := f.end
	if end.Before(r.start) {
		end = r.start
	}
	root := ss.Spans().AppendEmpty()
	traceID, rootID := rootIDs(root, string(r.uid), r.generation, r.origin)
	root.SetName(rolloutSpanName)
	root.SetKind(ptrace.SpanKindInternal)
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(r.start))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
	switch f.outcome {
	case outcomeAvailable, outcomeSuperseded:
	default:
		root.Status().SetCode(ptrace.StatusCodeError)
		root.Status().SetMessage("rollout did not complete: " + f.outcome)
	}
	a := root.Attributes()
	objref.Put(a, attr.Subject, objref.Ref{Kind: "Deployment", APIVersion: "apps/v1", Namespace: r.namespace, Name: r.name, UID: string(r.uid)})
	a.PutStr(attr.LifecycleOutcome, f.outcome)
	a.PutStr(attr.LifecycleParent, r.origin.from)
	a.PutInt(attr.LifecycleGeneration, r.generation)

	sets := make([]*setProgress, 0, len(r.sets))
	for _, p := range r.sets {
		sets = append(sets, p)
	}
	sort.Slice(sets, func(i, j int) bool {
		return sets[i].began.Before(sets[j].began) || sets[i].began.Equal(sets[j].began) && sets[i].name < sets[j].name
	})
	for _, p := range sets {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(traceID)
		s.SetSpanID(objspans.SpanID(string(r.uid), r.generation, string(p.uid)))
		s.SetParentSpanID(rootID)
		s.SetName(scaleDownSpanName)
		if p.isNew {
			s.SetName(scaleUpSpanName)
		}
		s.SetKind(ptrace.SpanKindInternal)
		begin, done := clampTime(p.began, r.start, end), end
		if !p.done.IsZero() {
			done = clampTime(p.done, begin, end)
		}
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(begin))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(done))
		if p.sc.IsValid() && (p.sc.TraceID() != r.origin.sc.TraceID() || p.sc.SpanID() != r.origin.sc.SpanID()) {
			l := s.Links().AppendEmpty() // the context the ReplicaSet carries: the controller's work on it
			l.SetTraceID(pcommon.TraceID(p.sc.TraceID()))
			l.SetSpanID(pcommon.SpanID(p.sc.SpanID()))
			l.TraceState().FromRaw(p.sc.TraceState().String())
		}
		sa := s.Attributes()
		objref.Put(sa, attr.Subject, objref.Ref{Kind: "ReplicaSet", APIVersion: "apps/v1", Namespace: r.namespace, Name: p.name, UID: string(p.uid)})
		sa.PutInt(attr.LifecycleReplicas, int64(p.target))
	}
	return td
}

// clampTime returns t within [lo, hi].
func clampTime(t, lo, hi time.Time) time.Time {
	if t.Before(lo) {
		return lo
	}
	if t.After(hi) {
		return hi
	}
	return t
}

// trimDeployment keeps of a Deployment read what the tracker reads, with the hash of its
// desired state.
func trimDeployment(d *appsv1.Deployment) *appsv1.Deployment {
	meta := trimMeta(&d.ObjectMeta)
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[specAnnotation] = specHash(d)
	return &appsv1.Deployment{
		ObjectMeta: meta,
		Spec:       appsv1.DeploymentSpec{Replicas: d.Spec.Replicas},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: d.Status.ObservedGeneration, Replicas: d.Status.Replicas, UpdatedReplicas: d.Status.UpdatedReplicas,
			AvailableReplicas: d.Status.AvailableReplicas, Conditions: d.Status.Conditions,
		},
	}
}

// trimReplicaSet keeps of a ReplicaSet read what the tracker reads.
func trimReplicaSet(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: trimMeta(&rs.ObjectMeta),
		Spec:       appsv1.ReplicaSetSpec{Replicas: rs.Spec.Replicas},
		Status:     appsv1.ReplicaSetStatus{Replicas: rs.Status.Replicas, AvailableReplicas: rs.Status.AvailableReplicas},
	}
}

// trimMeta keeps identity, times, the controller owner and the trace and revision annotations.
func trimMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, Generation: m.Generation, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp, Annotations: traceAnnotations(m.Annotations),
	}
	if v, ok := m.Annotations[revisionAnnotation]; ok {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[revisionAnnotation] = v
	}
	if c := metav1.GetControllerOfNoCopy(m); c != nil {
		out.OwnerReferences = []metav1.OwnerReference{*c}
	}
	return out
}
