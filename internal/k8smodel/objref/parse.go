// SPDX-License-Identifier: Apache-2.0

package objref

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits from the Kubernetes API's name validation.
const (
	maxNameLen      = 253 // DNS-1123 subdomain, the longest object name the API accepts
	maxNamespaceLen = 63  // DNS-1123 label
	maxUIDLen       = 128
	maxKindLen      = 253
	maxAPIVersion   = 317 // DNS-1123 subdomain group, "/", DNS-1123 label version
)

// Spelling is a reference as a component spelled it, before its kind and scope are known.
type Spelling struct {
	Ref
	// Bare is true when the spelling said nothing about the namespace (a plain "name", or a map
	// without a namespace), as opposed to "/name", which says the namespace is empty.
	Bare bool
	// Detailed is true when the spelling carried fields a namespace/name string cannot hold:
	// uid, kind, apiVersion, resourceVersion or fieldPath.
	Detailed bool
}

// ParseText parses a reference written as text: "namespace/name", a bare "name", "/name" (a
// NamespacedName with an empty namespace), or a JSON object, which is how klog's text format
// writes a struct such as an ObjectReference.
func ParseText(s string) (Spelling, Reason) {
	if s == "" {
		return Spelling{}, Empty
	}
	if s[0] == '{' {
		return ParseJSON(s)
	}
	slash := strings.IndexByte(s, '/')
	if slash < 0 {
		if !validName(s) {
			return Spelling{}, Malformed
		}
		return Spelling{Ref: Ref{Name: s}, Bare: true}, OK
	}
	ns, name := s[:slash], s[slash+1:]
	if strings.IndexByte(name, '/') >= 0 {
		return Spelling{}, Malformed
	}
	if name == "" {
		return Spelling{}, Empty
	}
	if (ns != "" && !validNamespace(ns)) || !validName(name) {
		return Spelling{}, Malformed
	}
	return Spelling{Ref: Ref{Namespace: ns, Name: name}}, OK
}

// ParseJSON parses a reference written as a JSON object with ObjectReference field names and
// string values. It reads the object directly (references are small and flat), so it rejects
// what encoding/json rejects and in addition any value that is not a string.
func ParseJSON(s string) (Spelling, Reason) {
	var f Fields
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return Spelling{}, Malformed
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		i = skipSpace(s, i+1)
		if i != len(s) {
			return Spelling{}, Malformed
		}
		return f.Spelling()
	}
	for {
		key, next, ok := jsonString(s, i)
		if !ok {
			return Spelling{}, Malformed
		}
		i = skipSpace(s, next)
		if i >= len(s) || s[i] != ':' {
			return Spelling{}, Malformed
		}
		i = skipSpace(s, i+1)
		value, next, ok := jsonString(s, i)
		if !ok {
			return Spelling{}, Malformed // not a string, or not valid JSON
		}
		f.Add(key, value)
		i = skipSpace(s, next)
		if i >= len(s) {
			return Spelling{}, Malformed
		}
		if s[i] == '}' {
			break
		}
		if s[i] != ',' {
			return Spelling{}, Malformed
		}
		i = skipSpace(s, i+1)
	}
	if skipSpace(s, i+1) != len(s) {
		return Spelling{}, Malformed
	}
	return f.Spelling()
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// jsonString reads the JSON string starting at s[i] and returns its value and the index after
// it. A string without escapes is returned as a substring of s.
func jsonString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	escaped := false
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '\\':
			escaped = true
			j++
		case c == '"':
			if !escaped {
				if !utf8.ValidString(s[i+1 : j]) {
					return "", i, false
				}
				return s[i+1 : j], j + 1, true
			}
			var v string
			if err := json.Unmarshal([]byte(s[i:j+1]), &v); err != nil {
				return "", i, false
			}
			return v, j + 1, true
		case c < ' ':
			return "", i, false
		}
	}
	return "", i, false
}

// Field bits, to catch a repeated field.
const (
	fieldName uint8 = 1 << iota
	fieldNamespace
	fieldUID
	fieldKind
	fieldAPIVersion
	fieldResourceVersion
	fieldFieldPath
)

// Fields builds a Ref from the fields of a map, one at a time, so that callers can feed it from
// any map type without copying. The zero value is ready to use.
type Fields struct {
	ref  Ref
	seen uint8
	bad  bool
}

// Add records a string field. A key that is not an ObjectReference field, or a repeated one,
// makes the map malformed.
func (f *Fields) Add(key, value string) {
	var bit uint8
	switch key {
	case "name":
		bit, f.ref.Name = fieldName, value
	case "namespace":
		bit, f.ref.Namespace = fieldNamespace, value
	case "uid":
		bit, f.ref.UID = fieldUID, value
	case "kind":
		bit, f.ref.Kind = fieldKind, value
	case "apiVersion":
		bit, f.ref.APIVersion = fieldAPIVersion, value
	case "resourceVersion":
		bit, f.ref.ResourceVersion = fieldResourceVersion, value
	case "fieldPath":
		bit, f.ref.FieldPath = fieldFieldPath, value
	default:
		f.bad = true
		return
	}
	if f.seen&bit != 0 {
		f.bad = true
	}
	f.seen |= bit
}

// AddOther records a field whose value is not a string: a reference has none.
func (f *Fields) AddOther(string) { f.bad = true }

// Spelling returns the reference the fields spell, or why they do not spell one.
func (f *Fields) Spelling() (Spelling, Reason) {
	r := Spelling{Ref: f.ref}
	if f.bad || f.seen&fieldName == 0 {
		return Spelling{}, Malformed
	}
	if r.Name == "" {
		return Spelling{}, Empty
	}
	if !validName(r.Name) ||
		(r.Namespace != "" && !validNamespace(r.Namespace)) ||
		(r.UID != "" && !validUID(r.UID)) ||
		(r.Kind != "" && !validKind(r.Kind)) ||
		(r.APIVersion != "" && !validAPIVersion(r.APIVersion)) ||
		!validText(r.FieldPath) || !validText(r.ResourceVersion) {
		return Spelling{}, Malformed
	}
	r.Bare = r.Namespace == ""
	r.Detailed = f.seen&^(fieldName|fieldNamespace) != 0
	return r, OK
}

// validName accepts the API's most permissive name rule (names usable as a URL path segment):
// not "." or "..", no "/" or "%", and in addition no spaces or control characters, which no
// real object name has and which mark free text logged under a reference key. A leading '{', '['
// or '"' is refused too: it marks JSON text, a list or a quoted value, never a name.
func validName(s string) bool {
	if len(s) == 0 || len(s) > maxNameLen || s == "." || s == ".." ||
		s[0] == '{' || s[0] == '[' || s[0] == '"' {
		return false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == 0x7f || c == '/' || c == '%' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return false
		}
		i += size
	}
	return true
}

// validNamespace accepts a DNS-1123 label, the rule for namespace names.
func validNamespace(s string) bool {
	if len(s) == 0 || len(s) > maxNamespaceLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// validUID accepts printable ASCII without spaces (UIDs are UUIDs; tests often use short ids).
func validUID(s string) bool {
	if len(s) > maxUIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// validKind accepts an identifier starting with a letter, as kinds are (Pod, ReplicaSet, MyCRD).
func validKind(s string) bool {
	if len(s) > maxKindLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// validAPIVersion accepts "version" or "group/version" in lowercase DNS characters.
func validAPIVersion(s string) bool {
	if len(s) > maxAPIVersion {
		return false
	}
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.':
		case c == '/' && i > 0 && i < len(s)-1:
			slashes++
		default:
			return false
		}
	}
	return slashes <= 1
}

// validText accepts printable text without control characters, at most maxNameLen bytes (a
// field path such as spec.containers{app}, a resource version).
func validText(s string) bool {
	if len(s) > maxNameLen || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// ValidUID reports whether s may be an object uid (used for uids given in a sibling attribute).
func ValidUID(s string) bool { return s != "" && validUID(s) }
