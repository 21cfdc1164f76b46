// SPDX-License-Identifier: Apache-2.0

package attr

// Lifecycle span attributes written by kube_lifecycle. The object a span is about (a Pod, a
// Deployment, a ReplicaSet) is written with the Subject set.
const (
	// LifecycleOutcome is how a lifecycle trace ended: for a Pod ready, succeeded, failed,
	// timeout or deleted; for a Deployment rollout available, progress_deadline_exceeded,
	// superseded, timeout or deleted.
	LifecycleOutcome = Prefix + "lifecycle.outcome"
	// LifecycleContainerName is, on a span event, the container that started or restarted.
	LifecycleContainerName = Prefix + "lifecycle.container.name"
	// LifecycleContainerRestarts is, on a span event, the container's restart count.
	LifecycleContainerRestarts = Prefix + "lifecycle.container.restarts"
	// LifecycleParent says where the trace context came from: pod or deployment (the object's
	// own annotation), owner (an owner's, through trace_context) or none (a trace of its own).
	LifecycleParent = Prefix + "lifecycle.parent"
	// LifecycleGeneration is the Deployment generation a rollout trace is about.
	LifecycleGeneration = Prefix + "lifecycle.generation"
	// LifecycleReplicas is, on a ReplicaSet's span of a rollout, the replicas it was scaled to.
	LifecycleReplicas = Prefix + "lifecycle.replicas"
	// LifecycleWaiting is, on a Pod's phase or container start span, why containers were
	// waiting while it lasted (the kubelet's waiting reasons, such as ErrImagePull): what was
	// slow.
	LifecycleWaiting = Prefix + "lifecycle.waiting"
)

func init() {
	w := []string{"kube_lifecycle"}
	e := func(name, typ, doc string) Entry {
		return Entry{Name: name, Origin: Own, Place: Record, Type: typ, Writers: w, Doc: doc}
	}
	register(
		e(LifecycleOutcome, "string", "how a lifecycle trace ended: Pod ready, succeeded, failed, gave_up or deleted; rollout available, progress_deadline_exceeded, superseded, timeout or deleted"),
		e(LifecycleContainerName, "string", "on a span event or a container start span: the container"),
		e(LifecycleContainerRestarts, "int", "on a span event: the container's restart count"),
		e(LifecycleParent, "string", "where the trace context came from: pod, deployment, owner or none"),
		e(LifecycleGeneration, "int", "the Deployment generation a rollout trace is about"),
		e(LifecycleReplicas, "int", "on a ReplicaSet's rollout span: the replicas it was scaled to"),
		e(LifecycleWaiting, "slice", "on a Pod's phase or container start span: the containers' waiting reasons seen while it lasted, as container: reason"),
	)
}
