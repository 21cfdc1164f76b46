// SPDX-License-Identifier: Apache-2.0

package attr

// Lifecycle span attributes written by kube_lifecycle. The Pod a span is about is written with
// the Subject set.
const (
	// LifecycleOutcome is how a Pod's lifecycle trace ended: ready, succeeded, failed, timeout
	// or deleted.
	LifecycleOutcome = Prefix + "lifecycle.outcome"
	// LifecycleContainerName is, on a span event, the container that started or restarted.
	LifecycleContainerName = Prefix + "lifecycle.container.name"
	// LifecycleContainerRestarts is, on a span event, the container's restart count.
	LifecycleContainerRestarts = Prefix + "lifecycle.container.restarts"
	// LifecycleParent says where the trace context came from: pod (the Pod's own annotation),
	// owner (an owner's, through trace_context) or none (a trace of its own).
	LifecycleParent = Prefix + "lifecycle.parent"
)

func init() {
	w := []string{"kube_lifecycle"}
	e := func(name, typ, doc string) Entry {
		return Entry{Name: name, Origin: Own, Place: Record, Type: typ, Writers: w, Doc: doc}
	}
	register(
		e(LifecycleOutcome, "string", "how a Pod's lifecycle trace ended: ready, succeeded, failed, timeout or deleted"),
		e(LifecycleContainerName, "string", "on a span event: the container that started or restarted"),
		e(LifecycleContainerRestarts, "int", "on a span event: the container's restart count"),
		e(LifecycleParent, "string", "where the trace context came from: pod, owner or none"),
	)
}
