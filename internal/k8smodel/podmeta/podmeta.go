// SPDX-License-Identifier: Apache-2.0

// Package podmeta is the contract between a node's one source of Pod metadata (the
// pod_metadata extension) and the components that read it (cri_log today). A component finds
// the source among the collector's extensions and asserts it to Source; it never watches Pods
// itself, so a process holds one Pod watch however many components need the node's Pods.
//
// The package is standard library only: importing the contract does not pull in client-go.
package podmeta

import (
	"context"
	"strings"
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

// Truthy reports whether an annotation or label value turns a switch on: "true", any case,
// surrounding spaces ignored. Anything else is off.
func Truthy(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }
