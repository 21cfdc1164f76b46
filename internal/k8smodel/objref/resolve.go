// SPDX-License-Identifier: Apache-2.0

package objref

import "strings"

// Canonicalize checks a complete reference (an Event's regarding object, a map that states its
// kind) against the built-in kind table and completes it; see Table.Canonicalize.
func Canonicalize(r *Ref) Reason { return defaultTable.Canonicalize(r) }

// Canonicalize checks r and completes it in place: the name against the naming rule of its kind
// (the most permissive rule for kinds the table does not know), the namespace, uid, kind and
// apiVersion against the API's rules, the namespace against the kind's scope; a known kind
// without an apiVersion gets the table's; a Node uid equal to the node's name is dropped
// (kubelet and kube-proxy write node references so; it is not a uid). On rejection r is left
// as it was.
func (t *Table) Canonicalize(r *Ref) Reason {
	c := *r
	if c.Name == "" {
		return Empty
	}
	if (c.Kind != "" && !validKind(c.Kind)) || (c.APIVersion != "" && !validAPIVersion(c.APIVersion)) ||
		(c.Namespace != "" && !validNamespace(c.Namespace)) || (c.UID != "" && !validUID(c.UID)) ||
		!validText(c.FieldPath) || !validText(c.ResourceVersion) {
		return Malformed
	}
	k := t.Lookup(c.APIVersion, c.Kind)
	rule := PathSegment
	if k != nil {
		rule = k.Names
	}
	if !validFor(rule, c.Name) {
		return Malformed
	}
	if k != nil {
		switch {
		case k.Namespaced && c.Namespace == "":
			return MissingNamespace
		case !k.Namespaced && c.Namespace != "":
			return UnexpectedNamespace
		}
		if c.APIVersion == "" {
			c.APIVersion = k.APIVersion()
		}
		if k.Kind == "Node" && k.Group == "" && c.UID == c.Name {
			c.UID = ""
		}
	}
	*r = c
	return OK
}

// Context is what a log record says next to a reference: the kind its key implies, and the
// namespace and uid given by sibling keys.
type Context struct {
	// Kind is the kind the reference's key names, or a sibling key's kind; "" when the
	// reference must state its own.
	Kind string
	// APIVersion is the key's apiVersion, if it names one ("" for the kind's default).
	APIVersion string
	// Namespace, when HasNamespace, completes a bare name of a namespaced kind.
	Namespace    string
	HasNamespace bool
	// UID, when not empty, is a uid given next to the reference (podUID).
	UID string
}

// Resolve turns a spelling into a complete reference with the context its record gives: the
// kind (a spelling's own kind must agree with the key's), the namespace of a bare name, a
// sibling uid, kube-proxy's namespace/name:port for Services (the port is returned apart, as
// it is not part of the object's name), then Canonicalize. A bare name of a kind the table does
// not know is UnknownKind: its scope, and so its completeness, is unknown.
func (t *Table) Resolve(sp Spelling, ctx Context) (ref Ref, port string, why Reason) {
	ref = sp.Ref
	switch {
	case ctx.Kind == "":
	case ref.Kind == "":
		ref.Kind = ctx.Kind
		if ref.APIVersion == "" {
			ref.APIVersion = ctx.APIVersion
		}
	case ref.Kind != ctx.Kind:
		return Ref{}, "", KindMismatch
	}
	k := t.Lookup(ref.APIVersion, ref.Kind)
	if k != nil && k.Kind == "Service" && k.Group == "" {
		if i := strings.LastIndexByte(ref.Name, ':'); i > 0 && i < len(ref.Name)-1 && validPort(ref.Name[i+1:]) {
			ref.Name, port = ref.Name[:i], ref.Name[i+1:]
		}
	}
	if ref.Namespace == "" && sp.Bare {
		switch {
		case k == nil:
			return Ref{}, "", UnknownKind
		case k.Namespaced && !ctx.HasNamespace:
			return Ref{}, "", MissingNamespace
		case k.Namespaced:
			if !validNamespace(ctx.Namespace) {
				return Ref{}, "", Malformed
			}
			ref.Namespace = ctx.Namespace
		}
	} else if k == nil && ref.Namespace == "" {
		return Ref{}, "", UnknownKind
	}
	if ref.UID == "" && ctx.UID != "" && validUID(ctx.UID) {
		ref.UID = ctx.UID
	}
	if why = t.Canonicalize(&ref); why != OK {
		return Ref{}, "", why
	}
	return ref, port, OK
}

// validPort accepts a service port name (an IANA service name: lowercase alphanumerics and
// '-') or number, as kube-proxy appends it to a service's namespace/name.
func validPort(s string) bool {
	if len(s) > 15 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerAlnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// ParseList parses klog's text form of a KObjSlice: ["ns/a","ns/b",null], a JSON array of
// quoted namespace/name strings (null for a nil element, which is skipped). ok is false when s
// is not such a list.
func ParseList(s string) (items []string, ok bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '[' {
		return nil, false
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return nil, skipSpace(s, i+1) == len(s)
	}
	for {
		if strings.HasPrefix(s[i:], "null") {
			i += len("null")
		} else {
			v, next, ok := jsonString(s, i)
			if !ok {
				return nil, false
			}
			items = append(items, v)
			i = next
		}
		i = skipSpace(s, i)
		if i >= len(s) {
			return nil, false
		}
		if s[i] == ']' {
			if skipSpace(s, i+1) != len(s) {
				return nil, false
			}
			return items, true
		}
		if s[i] != ',' {
			return nil, false
		}
		i = skipSpace(s, i+1)
	}
}
