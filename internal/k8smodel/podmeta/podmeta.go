// SPDX-License-Identifier: Apache-2.0

// Package podmeta is the contract between a node's one source of Pod metadata (the
// pod_metadata extension) and the components that read it (cri_log, trace_context, kube_lifecycle). A component finds
// the source among the collector's extensions and asserts it to Source; it never watches Pods
// itself, so a process holds one Pod watch however many components need the node's Pods.
//
// The package is standard library only: importing the contract does not pull in client-go.
package podmeta

import (
	"context"
	"strings"
	"time"
)

// ExcludeAnnotation is the Pod annotation (value "true") by which a Pod opts out of log
// collection; ExcludeLabel is the default namespace label doing the same for every Pod of a
// namespace.
const (
	ExcludeAnnotation = "otelcol-k8s.io/exclude"
	ExcludeLabel      = "otelcol-k8s.io/exclude"
)

// Workload kinds an owner chain names.
const (
	KindReplicaSet  = "ReplicaSet"
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindDaemonSet   = "DaemonSet"
	KindJob         = "Job"
	KindCronJob     = "CronJob"
)

// Owner is one controller in a Pod's owner chain.
type Owner struct {
	// APIVersion and Kind as the owner reference names them ("apps/v1", "ReplicaSet").
	APIVersion, Kind string
	Name, UID        string
	// Read is when the source read the owner itself from the API server (a metadata GET), zero
	// when it did not (an owner known only from a reference, or whose read failed or found
	// another object). When set, Created is the owner's creation time and Annotations its
	// trace-context annotations (TraceAnnotation keys; nil when it has none), so that another
	// component needing them (trace_context) does not GET the same owner again.
	Read, Created time.Time
	Annotations   map[string]string
}

// TraceAnnotation reports whether an annotation key is one the owner annotations keep: the
// trace-context keys (pkg/objecttrace: trace.kubernetes.io/context and the tracing.k8s.io/
// keys).
func TraceAnnotation(key string) bool {
	return key == "trace.kubernetes.io/context" || strings.HasPrefix(key, "tracing.k8s.io/")
}

// Pod is what the source knows of one Pod. A Pod handed out is never modified afterwards (an
// update replaces it): readers may keep it and read its maps without locking, and must not
// write to them.
type Pod struct {
	UID, Namespace, Name, NodeName string
	// ResourceVersion of the object this record was made from.
	ResourceVersion string
	Labels          map[string]string
	Annotations     map[string]string
	// Owners is the controller chain, nearest first: a Deployment's Pod has its ReplicaSet,
	// then the Deployment; a CronJob's its Job, then the CronJob. Empty for a bare Pod.
	Owners []Owner
	// NamespaceUID and NamespaceLabels are the Pod's namespace's.
	NamespaceUID    string
	NamespaceLabels map[string]string
	// Excluded is true when the Pod opted out of log collection: its annotation
	// ExcludeAnnotation is "true", or its namespace carries the configured exclude label.
	// Decided by the source from metadata only.
	Excluded bool
	// Incomplete is true when part of the owner chain or the namespace could not be looked up
	// (the API server refused or did not answer): what is missing is missing, the rest is right.
	Incomplete bool
	// Generation, Created and Deleting are the object's metadata.generation, its
	// creationTimestamp and its deletionTimestamp (zero while it is not being deleted).
	Generation        int64
	Created, Deleting time.Time
	// DeletionGracePeriod is the metadata's deletionGracePeriodSeconds while the Pod is being
	// deleted: Deleting less it is when the deletion was asked for.
	DeletionGracePeriod time.Duration
	// Status is the Pod's status, trimmed to what the contract carries; nil unless the source
	// watches status (StatusSource.WatchesStatus).
	Status *Status
}

// Status is a Pod's status as the source keeps it: the phase, the conditions and the
// containers' states, nothing else (no addresses, no images' digests, no messages of the
// conditions). The names and values are the API's (Phase "Running", condition Type "Ready",
// Status "True").
type Status struct {
	Phase              string
	Conditions         []Condition
	InitContainers     []ContainerStatus
	Containers         []ContainerStatus
	StartTime          time.Time
	ObservedGeneration int64
}

// Condition is one of a Pod's status.conditions.
type Condition struct {
	Type, Status, Reason string
	LastTransitionTime   time.Time
}

// ContainerStatus is one container's status.
type ContainerStatus struct {
	Name         string
	Ready        bool
	RestartCount int32
	// State is the container's current state, LastTermination its previous run's end
	// (LastTermination.Terminated is nil when it never ended).
	State, LastTermination ContainerState
}

// ContainerState is at most one of Waiting, Running and Terminated, as the API's.
type ContainerState struct {
	Waiting    *Waiting
	Running    *Running
	Terminated *Terminated
}

// Waiting is a container not started yet (Reason "ContainerCreating", "ImagePullBackOff", ...).
type Waiting struct{ Reason string }

// Running is a running container.
type Running struct{ StartedAt time.Time }

// Terminated is a container that ended.
type Terminated struct {
	ExitCode              int32
	Reason                string
	StartedAt, FinishedAt time.Time
}

// Owner returns the name of the owner of the given kind in the Pod's chain, or "".
func (p *Pod) Owner(kind string) string {
	for _, o := range p.Owners {
		if o.Kind == kind {
			return o.Name
		}
	}
	return ""
}

// EventType says what happened to a Pod.
type EventType uint8

// Event types.
const (
	// Upserted: the Pod was seen for the first time, or changed.
	Upserted EventType = iota + 1
	// Deleted: the Pod is gone from the API server (or from the node).
	Deleted
)

// Event is one change, handed to subscribers.
type Event struct {
	Type EventType
	Pod  *Pod
}

// Source is a node's Pod metadata. Every method is safe for concurrent use and answers from
// memory, except WaitPod, which waits.
type Source interface {
	// PodByUID returns the Pod with this uid, if the source holds it.
	PodByUID(uid string) (*Pod, bool)
	// PodByName returns the Pod with this namespace and name, if the source holds it.
	PodByName(namespace, name string) (*Pod, bool)
	// WaitPod returns the Pod with this uid once the source holds it (owner chain and namespace
	// looked up), or false when ctx ends first. The caller bounds the wait through ctx.
	WaitPod(ctx context.Context, uid string) (*Pod, bool)
	// Subscribe calls fn for every later change, in order, on one goroutine of the source, once
	// the change is visible to the look-ups; fn must not block (it may read the source). The
	// returned function unsubscribes.
	Subscribe(fn func(Event)) (unsubscribe func())
}

// Feed is a Source that hands a component starting after it every Pod it holds and every
// later change (trace_context, kube_lifecycle): SubscribeAll returns the Pods held and
// subscribes fn to every later change, atomically: a change is either in the returned Pods or
// delivered to fn, never both, never neither. fn is called as Subscribe's.
type Feed interface {
	Source
	SubscribeAll(fn func(Event)) (pods []*Pod, unsubscribe func())
}

// StatusSource is a Feed that may carry the Pods' status: a component that needs status
// (kube_lifecycle) asserts the source to it and refuses to start when WatchesStatus is false, so
// a configuration that needs status says so on the source (pod_metadata's pod_status) and one
// that does not keeps the source's watch metadata-only.
type StatusSource interface {
	Feed
	// WatchesStatus reports whether the held Pods carry Status.
	WatchesStatus() bool
}

// Truthy reports whether an annotation or label value turns a switch on: "true", any case,
// surrounding spaces ignored. Anything else is off.
func Truthy(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }
