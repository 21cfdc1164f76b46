// SPDX-License-Identifier: Apache-2.0

package objref

import (
	"encoding/json"
	"testing"
)

// FuzzParseText checks that any input either parses into a valid reference whose canonical
// form parses back to the same identity, or is rejected with a reason; never a panic.
func FuzzParseText(f *testing.F) {
	for _, s := range []string{
		"kube-system/kubedns", "node-1", "/node-1", "", "ns/", "a/b/c", "..", "ns/\xff",
		`{"name":"a","namespace":"b"}`, `{"kind":"Pod","name":"a","namespace":"b","uid":"u"}`,
		`{"name":1}`, `{`, "system:node:x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, why := ParseText(s)
		if why >= numReasons {
			t.Fatalf("reason out of range: %d", why)
		}
		if why != OK {
			if ref != (Spelling{}) {
				t.Fatalf("rejected %q (%v) but returned %+v", s, why, ref)
			}
			return
		}
		if !validName(ref.Name) || (ref.Namespace != "" && !validNamespace(ref.Namespace)) {
			t.Fatalf("accepted invalid %+v from %q", ref, s)
		}
		canon := ref.String()
		if !ref.IsCanonical(canon) {
			t.Fatalf("String() %q not canonical for %+v", canon, ref)
		}
		back, why := ParseText(canon)
		if why != OK || back.Name != ref.Name || back.Namespace != ref.Namespace {
			t.Fatalf("round trip %q -> %+v -> %q -> %+v, %v", s, ref, canon, back, why)
		}
		if s[0] != '{' && canon != s && (s[0] != '/' || canon != s[1:]) {
			t.Fatalf("text %q canonicalized to different %q", s, canon)
		}
	})
}

// FuzzParseJSON checks the direct JSON reader against encoding/json: whatever it accepts must
// be valid JSON with the same name and namespace.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","namespace":"b"}`, `{"kind":"Pod","name":"a\u0062","uid":"u"}`, `{"name":"a\"b"}`,
		` { "name" : "a" } `, `{"name":1}`, `{}`, `{"name":"a",}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, why := ParseJSON(s)
		if why != OK {
			return
		}
		var m map[string]string
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("ParseJSON accepted %q, encoding/json: %v", s, err)
		}
		if m["name"] != ref.Name || m["namespace"] != ref.Namespace {
			t.Fatalf("ParseJSON(%q) = %+v, encoding/json %v", s, ref, m)
		}
	})
}

// FuzzResolve checks that whatever Resolve accepts is canonical: a second Canonicalize accepts
// it unchanged, its name passes its kind's rule, and nothing panics.
func FuzzResolve(f *testing.F) {
	kinds := []string{"", "Pod", "Node", "Service", "Namespace", "ClusterRole", "Certificate"}
	for _, s := range []string{"default/kubernetes:https", "node-1", "kube-system/kubedns", "a/b:c", "x:y", `{"kind":"Pod","name":"a","namespace":"b"}`} {
		f.Add(s, uint8(1), "default", true)
	}
	f.Fuzz(func(t *testing.T, s string, kind uint8, ns string, hasNS bool) {
		sp, why := ParseText(s)
		if why != OK {
			return
		}
		ref, _, why := Builtin().Resolve(sp, Context{Kind: kinds[int(kind)%len(kinds)], Namespace: ns, HasNamespace: hasNS})
		if why >= numReasons {
			t.Fatalf("reason out of range: %d", why)
		}
		if why != OK {
			return
		}
		again := ref
		if why := Canonicalize(&again); why != OK || again != ref {
			t.Fatalf("accepted %+v is not canonical: %+v, %v", ref, again, why)
		}
	})
}
