// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objevents"
)

// How rollouts are followed without watches (design.md rule 7).
const (
	// rolloutDebounce gathers the Events of one Deployment into one read.
	rolloutDebounce = time.Second
	// rolloutBackoffMin and rolloutBackoffMax bound the re-reads of an open rollout: from the
	// first, doubling to the max; an Event about the rollout brings the next read to within
	// rolloutDebounce and starts the doubling again.
	rolloutBackoffMin = time.Second
	rolloutBackoffMax = 30 * time.Second
	// rolloutQueueSize bounds the Events queued between the hub and the reader.
	rolloutQueueSize = 4096
	// maxSetsPerRollout bounds the ReplicaSet names a followed Deployment keeps.
	maxSetsPerRollout = 16
	// readTimeout bounds one GET.
	readTimeout = 10 * time.Second
)

// Reasons and controllers of the Events a rollout is followed from (the Deployment and
// ReplicaSet controllers' recorders).
const (
	reasonScaling          = "ScalingReplicaSet"
	reasonSuccessfulCreate = "SuccessfulCreate"
	reasonSuccessfulDelete = "SuccessfulDelete"
	controllerDeployment   = "deployment-controller"
	controllerReplicaSet   = "replicaset-controller"
)

// scaledReplicaSet returns the ReplicaSet a ScalingReplicaSet note names: the Deployment
// controller writes "Scaled up replica set <name> from <a> to <b>" (older releases: "... <name>
// to <b>"), "up" or "down".
func scaledReplicaSet(note string) (string, bool) {
	for _, p := range []string{"Scaled up replica set ", "Scaled down replica set "} {
		if rest, ok := strings.CutPrefix(note, p); ok {
			name, _, _ := strings.Cut(rest, " ")
			if name == "" || len(name) > 253 {
				return "", false
			}
			return name, true
		}
	}
	return "", false
}

// followed is a Deployment whose rollout the reader follows.
type followed struct {
	namespace, name string
	uid             types.UID // the last one read (empty before the first read)
	// sets are the ReplicaSets the Deployment's Events named, with their last trimmed copy
	// (nil: not read yet).
	sets    map[string]*appsv1.ReplicaSet
	due     time.Time // next read; zero: none planned
	backoff time.Duration
	reads   int  // reads of this rollout, bounded by rollout_max_reads
	listed  bool // only replayed Events (a relist) named it so far
	began   time.Time
}

// queued is one Event handed by the hub, or a leadership change.
type queued struct {
	ev     objevents.Event
	listed bool
	epoch  uint64
}

// rolloutReader follows Deployment rollouts from the Events trace_context's hub hands it and
// GETs of the Deployments and ReplicaSets they name (design.md rule 7). It implements
// objevents.Subscriber; one goroutine (run) owns its state.
type rolloutReader struct {
	r    *lifecycleReceiver
	apps rest.Interface // apps/v1 (kubeclient.Clients.Apps)

	queue chan queued
	wake  chan struct{}

	mu      sync.Mutex
	epoch   uint64 // bumped at every leadership change: queued Events of an older epoch are dropped
	leading bool

	follow map[string]*followed // by "namespace/name"
	bySet  map[string]string    // "namespace/replicaset" to its Deployment's key
	seen   uint64               // the epoch run last acted on
}

func newRolloutReader(r *lifecycleReceiver, apps rest.Interface) *rolloutReader {
	return &rolloutReader{
		r: r, apps: apps, queue: make(chan queued, rolloutQueueSize), wake: make(chan struct{}, 1),
		follow: map[string]*followed{}, bySet: map[string]string{},
	}
}

var _ objevents.Subscriber = (*rolloutReader)(nil)

// ObjectEvents queues the Events a rollout is followed from; it never blocks (objevents rule 2).
func (rr *rolloutReader) ObjectEvents(evs []objevents.Event, listed bool) {
	rr.mu.Lock()
	epoch, leading := rr.epoch, rr.leading
	rr.mu.Unlock()
	if !leading {
		return
	}
	for _, ev := range evs {
		if !relevant(ev) {
			continue
		}
		select {
		case rr.queue <- queued{ev: ev, listed: listed, epoch: epoch}:
		default:
			rr.dropped("queue_full")
		}
	}
}

// Leading starts or ends a term: rollouts follow kube_events' leadership (design.md rule 7).
func (rr *rolloutReader) Leading(leading bool) {
	rr.mu.Lock()
	rr.epoch++
	rr.leading = leading
	rr.mu.Unlock()
	select {
	case rr.wake <- struct{}{}:
	default:
	}
}

// relevant says whether an Event may start or move a rollout.
func relevant(ev objevents.Event) bool {
	switch ev.Regarding.Kind {
	case "Deployment":
		return ev.Reason == reasonScaling && ev.ReportingController == controllerDeployment
	case "ReplicaSet":
		return (ev.Reason == reasonSuccessfulCreate || ev.Reason == reasonSuccessfulDelete) && ev.ReportingController == controllerReplicaSet
	}
	return false
}

func (rr *rolloutReader) dropped(reason string) {
	rr.r.tel.ReceiverKubeLifecycleRolloutEventsDropped.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", reason)))
}

// run acts on the queued Events and the planned reads until ctx ends.
func (rr *rolloutReader) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		rr.checkEpoch()
		next := rr.readDue(ctx)
		wait := time.Hour
		if !next.IsZero() {
			wait = max(next.Sub(rr.r.now()), 0)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case q := <-rr.queue:
			rr.checkEpoch()
			if q.epoch == rr.seen {
				rr.event(q.ev, q.listed)
			}
		case <-rr.wake:
		case <-timer.C:
		}
	}
}

// checkEpoch forgets everything when the leadership changed: a new term starts from the
// Events its first list replays (design.md rule 7).
func (rr *rolloutReader) checkEpoch() {
	rr.mu.Lock()
	epoch := rr.epoch
	rr.mu.Unlock()
	if epoch == rr.seen {
		return
	}
	rr.seen = epoch
	clear(rr.follow)
	clear(rr.bySet)
	rr.r.rollouts.reset()
	rr.r.emitRollouts(nil)
}

// event plans a read for the Deployment an Event is about.
func (rr *rolloutReader) event(ev objevents.Event, listed bool) {
	now := rr.r.now()
	ref := ev.Regarding
	if ref.Kind == "ReplicaSet" { // only moves a rollout already followed
		key, ok := rr.bySet[ref.Namespace+"/"+ref.Name]
		if f := rr.follow[key]; ok && f != nil {
			rr.soon(f, now)
		}
		return
	}
	key := ref.Namespace + "/" + ref.Name
	f := rr.follow[key]
	if f == nil {
		if len(rr.follow) >= rr.r.cfg.MaxPending {
			rr.r.tel.ReceiverKubeLifecyclePendingDropped.Add(context.Background(), 1)
			return
		}
		f = &followed{namespace: ref.Namespace, name: ref.Name, sets: map[string]*appsv1.ReplicaSet{}, listed: listed}
		if !listed && !ev.Time.IsZero() && !ev.Time.After(now) {
			f.began = ev.Time // the controller's first step of the rollout
		}
		rr.follow[key] = f
	} else if f.uid != "" && !rr.r.rollouts.holds(f.uid) {
		// its rollout ended (rollout_timeout) since the last read: this Event starts afresh
		f.uid, f.reads, f.listed, f.began = "", 0, listed, time.Time{}
		if !listed && !ev.Time.IsZero() && !ev.Time.After(now) {
			f.began = ev.Time
		}
	}
	if !listed {
		f.listed = false
	}
	if name, ok := scaledReplicaSet(ev.Note); !ok {
		rr.dropped("unparsed")
	} else if _, known := f.sets[name]; !known && len(f.sets) < maxSetsPerRollout {
		f.sets[name] = nil
		rr.bySet[ref.Namespace+"/"+name] = key
	}
	rr.soon(f, now)
}

// soon brings f's next read to within rolloutDebounce and restarts its backoff.
func (rr *rolloutReader) soon(f *followed, now time.Time) {
	if at := now.Add(rolloutDebounce); f.due.IsZero() || at.Before(f.due) {
		f.due = at
	}
	f.backoff = rolloutBackoffMin
}

// readDue reads every followed Deployment whose read is due and returns the next planned read.
func (rr *rolloutReader) readDue(ctx context.Context) time.Time {
	var next time.Time
	for key, f := range rr.follow {
		if ctx.Err() != nil {
			return time.Time{}
		}
		if !f.due.IsZero() && !f.due.After(rr.r.now()) {
			rr.read(ctx, key, f)
		}
		if rr.follow[key] == nil {
			continue
		}
		if !f.due.IsZero() && (next.IsZero() || f.due.Before(next)) {
			next = f.due
		}
	}
	return next
}

// read GETs the Deployment and its named ReplicaSets and hands them to the tracker; it plans
// the next read while the rollout is open, and forgets f when it is not.
func (rr *rolloutReader) read(ctx context.Context, key string, f *followed) {
	f.due = time.Time{}
	if f.uid != "" && !rr.r.rollouts.holds(f.uid) {
		rr.forget(key, f) // ended (rollout_timeout) since the last read
		return
	}
	if f.reads >= rr.r.cfg.RolloutMaxReads {
		// the budget is spent: the rollout ends at rollout_timeout (design.md rule 7)
		if f.uid == "" || !rr.r.rollouts.holds(f.uid) {
			rr.forget(key, f)
			return
		}
		f.due = rr.r.now().Add(rolloutBackoffMax)
		return
	}
	f.reads++
	d, err := rr.getDeployment(ctx, f)
	if apierrors.IsNotFound(err) || err == nil && f.uid != "" && d.UID != f.uid {
		if f.uid != "" {
			rr.r.emitRollouts(rr.r.rollouts.deleted(f.uid))
		}
		if err != nil {
			rr.forget(key, f)
			return
		}
	}
	if err != nil {
		rr.plan(f)
		return
	}
	f.uid = d.UID
	revision := d.Annotations[revisionAnnotation]
	sets := make([]*appsv1.ReplicaSet, 0, len(f.sets))
	for name, last := range f.sets {
		if last != nil && last.Annotations[revisionAnnotation] != revision && replicas(last.Spec.Replicas) == 0 && last.Status.Replicas == 0 {
			sets = append(sets, last) // an old ReplicaSet scaled down stays so: not read again
			continue
		}
		rs, err := rr.getReplicaSet(ctx, f.namespace, name)
		switch {
		case apierrors.IsNotFound(err):
			delete(f.sets, name)
			delete(rr.bySet, f.namespace+"/"+name)
			continue
		case err != nil:
			if last != nil {
				sets = append(sets, last)
			}
			continue
		}
		if c := metav1.GetControllerOfNoCopy(rs); c == nil || c.UID != d.UID {
			continue // not this Deployment's (a name the Events gave does not choose what is traced)
		}
		f.sets[name] = rs
		sets = append(sets, rs)
	}
	ended, dropped := rr.r.rollouts.observeFrom(d, sets, true, f.listed, f.began)
	if dropped {
		rr.r.tel.ReceiverKubeLifecyclePendingDropped.Add(context.Background(), 1)
	}
	rr.r.emitRollouts(ended)
	if !rr.r.rollouts.holds(d.UID) {
		rr.forget(key, f) // ended, or nothing to trace: a later Event follows it again
		return
	}
	f.began = time.Time{}
	rr.plan(f)
}

// plan sets the next read after the backoff and doubles it.
func (rr *rolloutReader) plan(f *followed) {
	if f.backoff < rolloutBackoffMin {
		f.backoff = rolloutBackoffMin
	}
	f.due = rr.r.now().Add(f.backoff)
	f.backoff = min(2*f.backoff, rolloutBackoffMax)
}

func (rr *rolloutReader) forget(key string, f *followed) {
	for name := range f.sets {
		delete(rr.bySet, f.namespace+"/"+name)
	}
	delete(rr.follow, key)
}

func (rr *rolloutReader) getDeployment(ctx context.Context, f *followed) (*appsv1.Deployment, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	d := &appsv1.Deployment{}
	err := rr.apps.Get().Namespace(f.namespace).Resource("deployments").Name(f.name).Do(ctx).Into(d)
	rr.counted("deployments", err)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			rr.r.set.Logger.Debug("reading a Deployment failed", zap.String("deployment", f.namespace+"/"+f.name), zap.Error(err))
		}
		return nil, err
	}
	return trimDeployment(d), nil
}

func (rr *rolloutReader) getReplicaSet(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	rs := &appsv1.ReplicaSet{}
	err := rr.apps.Get().Namespace(namespace).Resource("replicasets").Name(name).Do(ctx).Into(rs)
	rr.counted("replicasets", err)
	if err != nil {
		return nil, err
	}
	return trimReplicaSet(rs), nil
}

func (rr *rolloutReader) counted(resource string, err error) {
	result := "ok"
	switch {
	case apierrors.IsNotFound(err):
		result = "not_found"
	case err != nil:
		result = "error"
	}
	rr.r.tel.ReceiverKubeLifecycleRolloutReads.Add(context.Background(), 1,
		metric.WithAttributes(attribute.String("resource", resource), attribute.String("result", result)))
}

// emitRollouts sends the traces of ended rollouts.
func (r *lifecycleReceiver) emitRollouts(ended []finishedRollout) {
	r.tel.ReceiverKubeLifecycleRolloutsPending.Record(context.Background(), int64(r.rollouts.pending()))
	for _, f := range ended {
		if !r.sampled(KindDeployment, string(f.r.uid), f.r.generation, f.r.origin) {
			continue
		}
		r.tel.ReceiverKubeLifecycleSpansEmitted.Add(context.Background(), 1,
			metric.WithAttributes(attribute.String("outcome", f.outcome), attribute.String("kind", string(KindDeployment))))
		if err := r.next.ConsumeTraces(context.Background(), buildRollout(f)); err != nil {
			r.set.Logger.Warn("rollout trace not delivered", zap.String("deployment", f.r.namespace+"/"+f.r.name), zap.Error(err))
		}
	}
}
