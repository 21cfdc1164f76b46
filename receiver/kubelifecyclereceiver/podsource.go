// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
)

// findPodSource returns the extension pod_metadata names, checking that it carries Pod status
// (design.md rule 1: the node's one Pod watch, no second one for this receiver).
func findPodSource(host component.Host, id component.ID) (podmeta.StatusSource, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, fmt.Errorf("kube_lifecycle: pod_metadata: extension %q is not configured; add it to the service's extensions", id)
	}
	src, ok := ext.(podmeta.StatusSource)
	if !ok {
		return nil, fmt.Errorf("kube_lifecycle: pod_metadata: extension %q (%T) does not serve podmeta.StatusSource", id, ext)
	}
	if !src.WatchesStatus() {
		return nil, fmt.Errorf("kube_lifecycle: pod_metadata: extension %q watches metadata only; set its pod_status: true", id)
	}
	return src, nil
}

// podFeed takes the node's Pods from the pod_metadata source instead of a watch of the
// receiver's own: the Pods held at subscription are first sights, then every change in the
// source's order. Changes are queued and handled on the feed's own goroutine, so the source's
// watch goroutine never waits for the pipeline (podmeta: a subscriber must not block).
type podFeed struct {
	r *lifecycleReceiver

	mu     sync.Mutex
	queue  []podmeta.Event
	wake   chan struct{}
	seen   map[string]bool // uids handed to observe, for its "first sight"
	synced bool
}

// watchPodSource subscribes to src until ctx ends; the returned function reports true once the
// Pods held at subscription were handed to the receiver.
func (r *lifecycleReceiver) watchPodSource(ctx context.Context, src podmeta.StatusSource) cache.InformerSynced {
	f := &podFeed{r: r, wake: make(chan struct{}, 1), seen: map[string]bool{}}
	held, unsubscribe := src.SubscribeAll(f.push)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer unsubscribe()
		for _, p := range held {
			f.handle(podmeta.Event{Type: podmeta.Upserted, Pod: p})
		}
		f.mu.Lock()
		f.synced = true
		f.mu.Unlock()
		f.run(ctx)
	}()
	return func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.synced
	}
}

// push queues a change; it never blocks.
func (f *podFeed) push(ev podmeta.Event) {
	f.mu.Lock()
	f.queue = append(f.queue, ev)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *podFeed) run(ctx context.Context) {
	for {
		f.mu.Lock()
		batch := f.queue
		f.queue = nil
		f.mu.Unlock()
		for _, ev := range batch {
			f.handle(ev)
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		}
	}
}

// handle hands one change to the receiver as its informer would have.
func (f *podFeed) handle(ev podmeta.Event) {
	if ev.Pod == nil || ev.Pod.Status == nil {
		return
	}
	pod := podFromMeta(ev.Pod)
	if ev.Type == podmeta.Deleted {
		delete(f.seen, ev.Pod.UID)
		f.r.deleted(pod)
		return
	}
	added := !f.seen[ev.Pod.UID]
	f.seen[ev.Pod.UID] = true
	f.r.observe(pod, added)
}

// podFromMeta makes of a source's Pod the trimmed Pod the receiver reads (trimPod's fields).
func podFromMeta(p *podmeta.Pod) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: p.Name, Namespace: p.Namespace, UID: types.UID(p.UID), Generation: p.Generation,
			ResourceVersion: p.ResourceVersion, CreationTimestamp: metav1.NewTime(p.Created),
			Annotations: traceAnnotations(p.Annotations),
		},
	}
	if !p.Deleting.IsZero() {
		t := metav1.NewTime(p.Deleting)
		pod.DeletionTimestamp = &t
		if p.DeletionGracePeriod > 0 {
			g := int64(p.DeletionGracePeriod / time.Second)
			pod.DeletionGracePeriodSeconds = &g
		}
	}
	st := p.Status
	pod.Status.Phase = corev1.PodPhase(st.Phase)
	if len(st.Conditions) > 0 {
		pod.Status.Conditions = make([]corev1.PodCondition, len(st.Conditions))
		for i, c := range st.Conditions {
			pod.Status.Conditions[i] = corev1.PodCondition{
				Type: corev1.PodConditionType(c.Type), Status: corev1.ConditionStatus(c.Status),
				Reason: c.Reason, LastTransitionTime: metav1.NewTime(c.LastTransitionTime),
			}
		}
	}
	pod.Status.InitContainerStatuses = containersFromMeta(st.InitContainers)
	pod.Status.ContainerStatuses = containersFromMeta(st.Containers)
	return pod
}

func containersFromMeta(in []podmeta.ContainerStatus) []corev1.ContainerStatus {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(in))
	for i, c := range in {
		out[i] = corev1.ContainerStatus{
			Name: c.Name, Ready: c.Ready, RestartCount: c.RestartCount,
			State: stateFromMeta(c.State), LastTerminationState: stateFromMeta(c.LastTermination),
		}
	}
	return out
}

func stateFromMeta(s podmeta.ContainerState) corev1.ContainerState {
	var out corev1.ContainerState
	if w := s.Waiting; w != nil {
		out.Waiting = &corev1.ContainerStateWaiting{Reason: w.Reason}
	}
	if r := s.Running; r != nil {
		out.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(r.StartedAt)}
	}
	if t := s.Terminated; t != nil {
		out.Terminated = &corev1.ContainerStateTerminated{
			ExitCode: t.ExitCode, Reason: t.Reason,
			StartedAt: metav1.NewTime(t.StartedAt), FinishedAt: metav1.NewTime(t.FinishedAt),
		}
	}
	return out
}
