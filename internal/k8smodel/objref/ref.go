// SPDX-License-Identifier: Apache-2.0

// Package objref is the project's model of a reference to a Kubernetes API object: how the
// components spell one (klog's KObj/KRef text and JSON forms, namespace/name strings,
// ObjectReference maps, KObjSlice lists, kube-proxy's namespace/name:port), the kind table
// (API group, scope and naming rule of each built-in kind), the checks a reference must pass
// before anything is written, and the attributes written for an object. object_ref and
// kube_events both write objects through Put, so the same object gets the same attributes.
package objref

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// Ref identifies one Kubernetes object, with the fields of an ObjectReference.
type Ref struct {
	Kind            string
	APIVersion      string
	Namespace       string
	Name            string
	UID             string
	FieldPath       string
	ResourceVersion string
}

// Group returns the API group of the reference's apiVersion ("" for the core group).
func (r Ref) Group() string { return APIGroup(r.APIVersion) }

// SplitAPIVersion splits an apiVersion into its API group and version: "apps/v1" is "apps" and
// "v1", "v1" is the core group "" and "v1", "" is "" and "". ok is false, with both parts empty,
// when apiVersion has more than one '/' (the API server's own parser refuses it too). It is the
// project's one parser of an apiVersion: every component takes the group from here.
func SplitAPIVersion(apiVersion string) (group, version string, ok bool) {
	i := strings.IndexByte(apiVersion, '/')
	if i < 0 {
		return "", apiVersion, true
	}
	if strings.IndexByte(apiVersion[i+1:], '/') >= 0 {
		return "", "", false
	}
	return apiVersion[:i], apiVersion[i+1:], true
}

// APIGroup returns the API group of an apiVersion ("apps/v1" -> "apps", "v1" -> ""), and ""
// for one SplitAPIVersion refuses.
func APIGroup(apiVersion string) string {
	g, _, _ := SplitAPIVersion(apiVersion)
	return g
}

// Key returns the canonical object key: Kind[.group]/[namespace/]name, such as
// "Pod/default/web-0", "Node/node-1" or "Service.serving.knative.dev/default/hello". It is
// unambiguous: kinds and groups hold no '/', names hold none, and a key has three parts exactly
// when the object is namespaced.
func (r Ref) Key() string {
	var b strings.Builder
	g := r.Group()
	b.Grow(len(r.Kind) + len(g) + len(r.Namespace) + len(r.Name) + 3)
	b.WriteString(r.Kind)
	if g != "" {
		b.WriteByte('.')
		b.WriteString(g)
	}
	b.WriteByte('/')
	if r.Namespace != "" {
		b.WriteString(r.Namespace)
		b.WriteByte('/')
	}
	b.WriteString(r.Name)
	return b.String()
}

// String returns the text form klog writes: "namespace/name", or "name" without a namespace.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// PutCount is how many attributes Put(m, set, r) writes at most: room to reserve in m.
func PutCount(set attr.ObjectSet, r Ref) int {
	n := 0
	for _, f := range [...][2]string{
		{set.Kind, r.Kind},
		{set.APIVersion, r.APIVersion},
		{set.Namespace, r.Namespace},
		{set.Name, r.Name},
		{set.UID, r.UID},
		{set.FieldPath, r.FieldPath},
		{set.ResourceVersion, r.ResourceVersion},
	} {
		if f[0] != "" && f[1] != "" {
			n++
		}
	}
	return n
}

// Put writes r's non-empty fields into m under the names of set, replacing values there.
func Put(m pcommon.Map, set attr.ObjectSet, r Ref) {
	put := func(name, value string) {
		if name != "" && value != "" {
			m.PutStr(name, value)
		}
	}
	put(set.Kind, r.Kind)
	put(set.APIVersion, r.APIVersion)
	put(set.Namespace, r.Namespace)
	put(set.Name, r.Name)
	put(set.UID, r.UID)
	put(set.FieldPath, r.FieldPath)
	put(set.ResourceVersion, r.ResourceVersion)
}

// Reason says why a reference was not accepted. OK means it was.
type Reason uint8

// Reasons, stable: they are used as telemetry attribute values.
const (
	OK Reason = iota
	// Empty: the name is empty (klog logs KObj(nil) as "").
	Empty
	// Malformed: not a reference spelling, or a name, namespace or field is invalid.
	Malformed
	// MissingNamespace: a namespaced kind without a namespace.
	MissingNamespace
	// UnexpectedNamespace: a cluster-scoped kind with a namespace.
	UnexpectedNamespace
	// UnknownKind: the kind is not in the kind table, and the spelling alone is incomplete.
	UnknownKind
	// KindMismatch: the reference states a kind other than the one its key implies.
	KindMismatch
	numReasons
)

// NumReasons is the number of Reason values, OK included, for arrays indexed by Reason.
const NumReasons = int(numReasons)

var reasonNames = [numReasons]string{
	OK:                  "ok",
	Empty:               "empty",
	Malformed:           "malformed",
	MissingNamespace:    "missing_namespace",
	UnexpectedNamespace: "unexpected_namespace",
	UnknownKind:         "unknown_kind",
	KindMismatch:        "kind_mismatch",
}

// String returns the reason's snake_case name.
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Reasons lists every rejection reason (all but OK).
func Reasons() []Reason {
	out := make([]Reason, 0, numReasons-1)
	for r := Empty; r < numReasons; r++ {
		out = append(out, r)
	}
	return out
}

// IsCanonical reports whether s is already the text form of r (String), without building it.
func (r Ref) IsCanonical(s string) bool {
	if r.Namespace == "" {
		return s == r.Name
	}
	return len(s) == len(r.Namespace)+1+len(r.Name) &&
		strings.HasPrefix(s, r.Namespace) && s[len(r.Namespace)] == '/' &&
		strings.HasSuffix(s, r.Name)
}
