// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// ownerIndex indexes ReplicaSets by their controller owner's uid.
const ownerIndex = "owner"

// watchRollouts makes the cluster-wide Deployment and ReplicaSet informers of a term (design.md
// rule 7); the caller runs them.
func (r *lifecycleReceiver) watchRollouts(apps rest.Interface) (deployments, sets cache.Controller) {
	dStore, dCtrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: cache.NewListWatchFromClient(apps, "deployments", metav1.NamespaceAll, fields.Everything()),
		ObjectType:    &appsv1.Deployment{},
		Transform:     trimDeployment,
		Handler: cache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    func(obj any, initial bool) { r.deploymentSeen(obj, initial) },
			UpdateFunc: func(_, obj any) { r.deploymentSeen(obj, false) },
			DeleteFunc: r.deploymentDeleted,
		},
	})
	sStore, sCtrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: cache.NewListWatchFromClient(apps, "replicasets", metav1.NamespaceAll, fields.Everything()),
		ObjectType:    &appsv1.ReplicaSet{},
		Transform:     trimReplicaSet,
		Indexers: cache.Indexers{ownerIndex: func(obj any) ([]string, error) {
			if rs, ok := obj.(*appsv1.ReplicaSet); ok {
				if c := metav1.GetControllerOfNoCopy(rs); c != nil && c.Kind == "Deployment" {
					return []string{string(c.UID)}, nil
				}
			}
			return nil, nil
		}},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    r.replicaSetSeen,
			UpdateFunc: func(_, obj any) { r.replicaSetSeen(obj) },
			DeleteFunc: r.replicaSetSeen,
		},
	})
	r.rolloutsMu.Lock()
	r.deployments, r.sets = dStore, sStore.(cache.Indexer)
	r.rolloutsMu.Unlock()
	return dCtrl, sCtrl
}

// stores returns the current term's stores.
func (r *lifecycleReceiver) stores() (cache.Store, cache.Indexer) {
	r.rolloutsMu.Lock()
	defer r.rolloutsMu.Unlock()
	return r.deployments, r.sets
}

// setsOf returns the ReplicaSets the Deployment controls.
func (r *lifecycleReceiver) setsOf(d *appsv1.Deployment) []*appsv1.ReplicaSet {
	_, sets := r.stores()
	if sets == nil {
		return nil
	}
	objs, _ := sets.ByIndex(ownerIndex, string(d.UID))
	out := make([]*appsv1.ReplicaSet, 0, len(objs))
	for _, o := range objs {
		if rs, ok := o.(*appsv1.ReplicaSet); ok {
			out = append(out, rs)
		}
	}
	return out
}

// deploymentSeen may start a rollout, moves it and ends it (design.md rules 7-9).
func (r *lifecycleReceiver) deploymentSeen(obj any, initial bool) {
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return
	}
	ended, dropped := r.rollouts.observe(d, r.setsOf(d), true, initial)
	if dropped {
		r.tel.ReceiverKubeLifecyclePendingDropped.Add(context.Background(), 1)
	}
	r.emitRollouts(ended)
}

// replicaSetSeen moves the rollout of the ReplicaSet's Deployment, if one is held.
func (r *lifecycleReceiver) replicaSetSeen(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return
	}
	c := metav1.GetControllerOfNoCopy(rs)
	deployments, _ := r.stores()
	if c == nil || c.Kind != "Deployment" || deployments == nil {
		return
	}
	o, exists, _ := deployments.GetByKey(rs.Namespace + "/" + c.Name)
	d, ok := o.(*appsv1.Deployment)
	if !exists || !ok || d.UID != c.UID {
		return
	}
	ended, _ := r.rollouts.observe(d, r.setsOf(d), false, false)
	r.emitRollouts(ended)
}

// deploymentDeleted ends the rollout of a deleted Deployment.
func (r *lifecycleReceiver) deploymentDeleted(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if d, ok := obj.(*appsv1.Deployment); ok {
		r.emitRollouts(r.rollouts.deleted(d.UID))
	}
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

// resetTerm forgets what a previous leadership term held: the new term's first lists see
// everything again.
func (r *lifecycleReceiver) resetTerm() {
	r.rollouts.reset()
	r.mu.Lock()
	n := len(r.pending)
	clear(r.pending)
	r.mu.Unlock()
	r.tel.ReceiverKubeLifecyclePending.Add(context.Background(), -int64(n))
	r.emitRollouts(nil)
}
