// Package k8sref parses the ways Kubernetes components spell a reference to an API object
// (klog's KObj/KRef text and JSON forms, namespace/name strings, ObjectReference maps) into one
// Ref, and says why when a spelling is malformed or ambiguous. It has no collector dependencies.
package k8sref

import "strings"

// Ref identifies one Kubernetes object.
type Ref struct {
	Namespace  string
	Name       string
	UID        string
	Kind       string
	APIVersion string
	// ResourceVersion and FieldPath are carried by ObjectReference maps (events); they are kept
	// so a reference rewritten as a map loses nothing.
	ResourceVersion string
	FieldPath       string
	// Bare is true when the spelling said nothing about the namespace (a plain "name", or a map
	// without a namespace), as opposed to "/name", which says the namespace is empty.
	Bare bool
	// Detailed is true when the spelling carried fields a namespace/name string cannot hold:
	// uid, kind, apiVersion, resourceVersion or fieldPath.
	Detailed bool
}

// String returns the canonical text form: "namespace/name", or "name" without a namespace.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// IsCanonical reports whether s is already the canonical text form of r.
func (r Ref) IsCanonical(s string) bool {
	if r.Namespace == "" {
		return s == r.Name
	}
	return len(s) == len(r.Namespace)+1+len(r.Name) &&
		strings.HasPrefix(s, r.Namespace) && s[len(r.Namespace)] == '/' &&
		strings.HasSuffix(s, r.Name)
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

// Scope is whether objects of a kind live in a namespace.
type Scope uint8

// Scopes.
const (
	// ScopeUnknown: the kind is not known.
	ScopeUnknown Scope = iota
	// Namespaced kinds need a namespace.
	Namespaced
	// ClusterScoped kinds have none.
	ClusterScoped
)

// Resolve checks ref against the scope of its kind, completing it in place. siblingNamespace,
// when hasSibling, is the namespace given next to the reference (a "namespace" attribute); it
// completes a bare reference to a namespaced kind and is ignored otherwise. On rejection ref is
// left as it was.
func Resolve(ref *Ref, scope Scope, siblingNamespace string, hasSibling bool) Reason {
	switch scope {
	case Namespaced:
		if ref.Namespace != "" {
			return OK
		}
		if !ref.Bare || !hasSibling {
			return MissingNamespace
		}
		if !validNamespace(siblingNamespace) {
			return Malformed
		}
		ref.Namespace = siblingNamespace
		ref.Bare = false
		return OK
	case ClusterScoped:
		if ref.Namespace != "" {
			return UnexpectedNamespace
		}
		ref.Bare = false
		return OK
	default:
		if ref.Namespace != "" {
			return OK
		}
		return UnknownKind
	}
}
