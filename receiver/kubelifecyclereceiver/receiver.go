// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objevents"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objspans"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/tracesource"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubelifecyclereceiver/internal/metadata"
)

// traceContextSource is the one trace-context look-up (internal/k8smodel/tracesource), as the
// receiver names it.
type traceContextSource = tracesource.Source

type lifecycleReceiver struct {
	cfg    *Config
	set    receiver.Settings
	next   consumer.Traces
	tel    *metadata.TelemetryBuilder
	source traceContextSource
	// pods is the pod_metadata source the Pods come from; nil: the receiver's own Pod watch.
	pods podmeta.StatusSource
	now  func() time.Time
	// startedAt is when Start ran: a Pod first seen at a desired state reached before it was
	// emitted by the collector that ran before (design.md rule 6).
	startedAt time.Time

	mu      sync.Mutex
	pending map[types.UID]*pendingPod // Pods not at their desired state yet

	rollouts *rolloutTracker
	// unsubscribe ends the rollout reader's subscription to trace_context's Event hub; nil
	// without Deployment in kinds.
	unsubscribe func()

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newReceiver(set receiver.Settings, cfg *Config, next consumer.Traces) (*lifecycleReceiver, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	r := &lifecycleReceiver{cfg: cfg, set: set, next: next, tel: tel, now: time.Now, pending: map[types.UID]*pendingPod{}}
	r.rollouts = newRolloutTracker(cfg.MaxPending, cfg.RolloutTimeout, func() time.Time { return r.now() })
	return r, nil
}

// Start opens the Pod watch (design.md rule 1) and waits for its first list, with
// leader_election only while this replica holds the Lease, and subscribes the rollouts to
// trace_context's Event hub (rule 7).
func (r *lifecycleReceiver) Start(ctx context.Context, host component.Host) error {
	r.startedAt = r.now()
	if r.cfg.TraceContext != nil {
		src, err := tracesource.Find(host, *r.cfg.TraceContext, "kube_lifecycle: trace_context")
		if err != nil {
			return err
		}
		r.source = src
		r.rollouts.trusts = func(kind, namespace string) bool { return tracesource.Trusted(src, kind, namespace) }
	}
	if r.cfg.PodMetadata != nil {
		src, err := findPodSource(host, *r.cfg.PodMetadata)
		if err != nil {
			return err
		}
		r.pods = src
	}
	rc, err := kubeclient.RestConfig(kubeclient.Options{Kubeconfig: r.cfg.Kubeconfig, UserAgent: "otelcol-k8s/kube_lifecycle"})
	if err != nil {
		return fmt.Errorf("kube_lifecycle: %w", err)
	}
	clients, err := kubeclient.NewClients(rc)
	if err != nil {
		return fmt.Errorf("kube_lifecycle: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.expire(runCtx)
	}()
	if r.cfg.traces(KindDeployment) {
		// rollouts: from the Events kube_events hands trace_context's hub, and GETs (rule 7)
		hub, ok := r.source.(objevents.Subscribable)
		if !ok {
			cancel()
			return fmt.Errorf("kube_lifecycle: trace_context: extension %q (%T) has no Event hub (SubscribeObjectEvents)", *r.cfg.TraceContext, r.source)
		}
		rr := newRolloutReader(r, clients.Apps)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			rr.run(runCtx)
		}()
		r.unsubscribe = hub.SubscribeObjectEvents(rr)
	}
	if le := r.cfg.LeaderElection; le.Enabled {
		namespace := le.LeaseNamespace
		if namespace == "" {
			namespace = ownNamespace()
		}
		// the Lease's own client: its 429s fail a renewal instead of sleeping past the deadline
		leaseClients, err := kubeclient.NewClients(kubeclient.LeaseConfig(rc))
		if err != nil {
			return fmt.Errorf("kube_lifecycle: %w", err)
		}
		elector, err := kubeclient.NewElector(leaseClients.Coordination, le.Lease(namespace),
			func(termCtx context.Context) {
				r.resetTerm()
				synced := r.watch(termCtx, clients)
				if !cache.WaitForCacheSync(termCtx.Done(), synced...) {
					return
				}
				<-termCtx.Done()
			})
		if err != nil {
			return fmt.Errorf("kube_lifecycle: %w", err)
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			elector.Run(runCtx)
		}()
		return nil
	}
	synced := r.watch(runCtx, clients)
	syncCtx, syncCancel := context.WithTimeout(ctx, r.cfg.SyncTimeout)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), synced...) {
		return errors.New("kube_lifecycle: the watches' first lists did not complete within sync_timeout")
	}
	return nil
}

// serviceAccountNamespace is where a Pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ownNamespace is the collector Pod's namespace, "default" outside a Pod (a local run).
func ownNamespace() string {
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil && len(bytes.TrimSpace(b)) > 0 {
		return string(bytes.TrimSpace(b))
	}
	return metav1.NamespaceDefault
}

// watch runs the informers of the configured kinds until ctx ends; it returns their synced
// functions.
func (r *lifecycleReceiver) watch(ctx context.Context, clients *kubeclient.Clients) []cache.InformerSynced {
	var synced []cache.InformerSynced
	run := func(ctrl cache.Controller) {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			ctrl.RunWithContext(ctx)
		}()
		synced = append(synced, ctrl.HasSynced)
	}
	if r.cfg.traces(KindPod) && r.pods != nil {
		synced = append(synced, r.watchPodSource(ctx, r.pods))
	} else if r.cfg.traces(KindPod) {
		lw := cache.NewFilteredListWatchFromClient(clients.Core, "pods", metav1.NamespaceAll, func(o *metav1.ListOptions) {
			if r.cfg.NodeName != "" {
				o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", r.cfg.NodeName).String()
			}
		})
		_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
			ListerWatcher: lw,
			ObjectType:    &corev1.Pod{},
			Transform:     trimPod,
			Handler: cache.ResourceEventHandlerFuncs{
				AddFunc:    func(obj any) { r.observe(obj, true) },
				UpdateFunc: func(_, obj any) { r.observe(obj, false) },
				DeleteFunc: r.deleted,
			},
		})
		run(ctrl)
	}
	return synced
}

// resetTerm forgets the Pods a previous leadership term held: the new term's first list sees
// them again.
func (r *lifecycleReceiver) resetTerm() {
	r.mu.Lock()
	n := len(r.pending)
	clear(r.pending)
	r.mu.Unlock()
	r.tel.ReceiverKubeLifecyclePending.Add(context.Background(), -int64(n))
}

// Shutdown stops the watch; Pods still pending get no trace (design.md rule 6).
func (r *lifecycleReceiver) Shutdown(context.Context) error {
	if r.unsubscribe != nil {
		r.unsubscribe()
	}
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
	r.tel.Shutdown()
	return nil
}

// trimPod keeps of a Pod only what the receiver reads, for the informer's cache (design.md
// rule 5).
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, Generation: pod.Generation,
			ResourceVersion: pod.ResourceVersion, CreationTimestamp: pod.CreationTimestamp, DeletionTimestamp: pod.DeletionTimestamp,
			DeletionGracePeriodSeconds: pod.DeletionGracePeriodSeconds, Annotations: traceAnnotations(pod.Annotations),
		},
		Status: corev1.PodStatus{
			Phase: pod.Status.Phase, Conditions: pod.Status.Conditions, ContainerStatuses: pod.Status.ContainerStatuses,
		},
	}, nil
}

// traceAnnotations keeps the trace context annotations only.
func traceAnnotations(a map[string]string) map[string]string {
	var out map[string]string
	for _, k := range []string{objecttrace.ContextAnnotation, objecttrace.TraceparentAnnotation, objecttrace.TracestateAnnotation} {
		if v, ok := a[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// pendingPod is a Pod held until its desired state (design.md rules 3-5).
type pendingPod struct {
	pod *corev1.Pod // the latest trimmed copy (the informer's; never changed)
	// origin is the context captured when the Pod was first seen; while it is "none" it is
	// read again at every update, so an owner's context learnt later still counts.
	origin  origin
	waiting []waitingReason
}

// waitingReason is a container's waiting reason seen while the Pod was pending, and the phase
// the Pod was in then (design.md rule 4).
type waitingReason struct {
	container, reason string
	phase             corev1.PodConditionType
}

// observe handles a Pod seen (added: first sight) or updated (design.md rules 3-6).
func (r *lifecycleReceiver) observe(obj any, added bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	outcome, at, done := desiredState(pod)
	if !done && pod.DeletionTimestamp != nil { // graceful deletion: the intent is gone
		// when it was asked for: the deletion timestamp is that moment plus the grace period
		outcome, at, done = outcomeDeleted, pod.DeletionTimestamp.Time, true
		if g := pod.DeletionGracePeriodSeconds; g != nil && *g > 0 {
			at = at.Add(-time.Duration(*g) * time.Second)
		}
		if at.Before(pod.CreationTimestamp.Time) || at.After(r.now()) {
			at = r.now()
		}
	}
	r.mu.Lock()
	p, held := r.pending[pod.UID]
	switch {
	case done && held:
		r.update(p, pod)
		delete(r.pending, pod.UID)
		r.mu.Unlock()
		r.tel.ReceiverKubeLifecyclePending.Add(context.Background(), -1)
		r.emit(p, outcome, at)
		return
	case done && added:
		r.mu.Unlock()
		if at.Before(r.startedAt.Add(-conditionPrecision)) {
			// at its desired state before this collector started: its predecessor emitted it
			// (design.md rule 6)
			r.dropped(KindPod, reasonEndedBeforeStart)
			return
		}
		p = &pendingPod{pod: pod, origin: r.origin(pod)}
		r.update(p, pod)
		r.emit(p, outcome, at)
		return
	case !done && added && !held:
		if len(r.pending) >= r.cfg.MaxPending {
			r.mu.Unlock()
			r.tel.ReceiverKubeLifecyclePendingDropped.Add(context.Background(), 1)
			return
		}
		p = &pendingPod{origin: r.origin(pod)}
		r.update(p, pod)
		r.pending[pod.UID] = p
		r.tel.ReceiverKubeLifecyclePending.Add(context.Background(), 1)
	case held:
		r.update(p, pod)
	}
	r.mu.Unlock()
}

// conditionPrecision is the precision of the times the API server writes (conditions,
// container starts): a Pod whose desired state is within it of the start may be new.
const conditionPrecision = time.Second

// update records pod as p's latest copy, the waiting reasons it shows, and the context when p
// has none yet (design.md rule 3). Called with r.mu held.
func (r *lifecycleReceiver) update(p *pendingPod, pod *corev1.Pod) {
	p.pod = pod
	if p.origin.from == originNone {
		p.origin = r.origin(pod)
	}
	phase := pendingPhase(pod, time.Time{})
	for _, cs := range pod.Status.ContainerStatuses {
		w := cs.State.Waiting
		if w == nil || w.Reason == "" {
			continue
		}
		seen := false
		for _, o := range p.waiting {
			if o.container == cs.Name && o.reason == w.Reason && o.phase == phase {
				seen = true
				break
			}
		}
		if !seen && len(p.waiting) < maxWaitingReasons {
			p.waiting = append(p.waiting, waitingReason{container: cs.Name, reason: w.Reason, phase: phase})
		}
	}
}

// maxWaitingReasons bounds the waiting reasons kept per Pod.
const maxWaitingReasons = 16

// deleted ends the trace of a pending Pod that is deleted (design.md rule 4).
func (r *lifecycleReceiver) deleted(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	r.mu.Lock()
	p, held := r.pending[pod.UID]
	delete(r.pending, pod.UID)
	r.mu.Unlock()
	if held {
		r.tel.ReceiverKubeLifecyclePending.Add(context.Background(), -1)
		r.emit(p, outcomeDeleted, r.now())
	}
}

// expire gives up on Pods pending longer than give_up_after (design.md rule 4); their later
// updates are ignored.
func (r *lifecycleReceiver) expire(ctx context.Context) {
	period := min(r.cfg.GiveUpAfter/4, r.cfg.RolloutTimeout/4, 10*time.Second)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := r.now()
		var expired []*pendingPod
		r.mu.Lock()
		for uid, p := range r.pending {
			if now.Sub(p.pod.CreationTimestamp.Time) >= r.cfg.GiveUpAfter {
				expired = append(expired, p)
				delete(r.pending, uid)
			}
		}
		r.mu.Unlock()
		for _, p := range expired {
			r.tel.ReceiverKubeLifecyclePending.Add(ctx, -1)
			r.emit(p, outcomeGaveUp, now)
		}
		r.emitRollouts(r.rollouts.expire())
	}
}

// Reasons a trace is not emitted besides sampling (receiver_kube_lifecycle_traces_dropped).
const reasonEndedBeforeStart = "ended_before_start"

func (r *lifecycleReceiver) dropped(kind Kind, reason string) {
	r.tel.ReceiverKubeLifecycleTracesDropped.Add(context.Background(), 1,
		metric.WithAttributes(attribute.String("kind", string(kind)), attribute.String("reason", reason)))
}

// sampled applies the sampling configuration to a trace about an object of kind (design.md
// rule 11), counting what it drops.
func (r *lifecycleReceiver) sampled(kind Kind, uid string, generation int64, o origin) bool {
	d := r.cfg.Sampling.Decide(string(kind), o.sc, traceOf(uid, generation, o))
	if d != objspans.Sample {
		r.dropped(kind, d.String())
		return false
	}
	return true
}

// emit sends the Pod's lifecycle trace.
func (r *lifecycleReceiver) emit(p *pendingPod, outcome string, end time.Time) {
	pod := p.pod
	if !r.sampled(KindPod, string(pod.UID), pod.Generation, p.origin) {
		return
	}
	td := buildTrace(pod, outcome, end, p.origin, p.waiting)
	r.tel.ReceiverKubeLifecycleSpansEmitted.Add(context.Background(), 1, metric.WithAttributes(attribute.String("outcome", outcome), attribute.String("kind", string(KindPod))))
	if err := r.next.ConsumeTraces(context.Background(), td); err != nil {
		r.set.Logger.Warn("lifecycle trace not delivered", zap.String("pod", pod.Namespace+"/"+pod.Name), zap.Error(err))
	}
}

// origin finds the Pod's trace context (design.md rule 3).
func (r *lifecycleReceiver) origin(pod *corev1.Pod) origin {
	sc, scheme, _ := objecttrace.SpanContextFromAnnotations(pod.Annotations)
	if sc.IsValid() && tracesource.Trusted(r.source, "Pod", pod.Namespace) {
		return origin{sc: sc, link: scheme == objecttrace.SchemeTraceparent, from: "pod"}
	}
	if r.source != nil && pod.Name != "" {
		if sc, link, ok := r.source.SpanContextForObject(context.Background(), "v1", "Pod", pod.Namespace, pod.Name, string(pod.UID)); ok && sc.IsValid() {
			return origin{sc: sc, link: link, from: "owner"}
		}
	}
	return origin{from: originNone}
}
