// SPDX-License-Identifier: Apache-2.0

package objref

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseText(t *testing.T) {
	long := strings.Repeat("a", maxNameLen)
	tests := []struct {
		name string
		in   string
		want Spelling
		why  Reason
	}{
		{"klog KObj namespaced", "kube-system/kubedns", Spelling{Ref: Ref{Namespace: "kube-system", Name: "kubedns"}}, OK},
		{"klog KRef cluster-scoped", "node-1", Spelling{Ref: Ref{Name: "node-1"}, Bare: true}, OK},
		{"NamespacedName without namespace", "/node-1", Spelling{Ref: Ref{Name: "node-1"}}, OK},
		{"rbac name with colons", "system:controller:job-controller", Spelling{Ref: Ref{Name: "system:controller:job-controller"}, Bare: true}, OK},
		{"dotted name", "default/web.v1", Spelling{Ref: Ref{Namespace: "default", Name: "web.v1"}}, OK},
		{"unicode name", "ns/名前", Spelling{Ref: Ref{Namespace: "ns", Name: "名前"}}, OK},
		{"longest name", "ns/" + long, Spelling{Ref: Ref{Namespace: "ns", Name: long}}, OK},
		{"KObj(nil)", "", Spelling{}, Empty},
		{"KRef(ns, empty)", "ns/", Spelling{}, Empty},
		{"slash only", "/", Spelling{}, Empty},
		{"name too long", "ns/" + long + "a", Spelling{}, Malformed},
		{"three segments", "a/b/c", Spelling{}, Malformed},
		{"uppercase namespace", "Kube/x", Spelling{}, Malformed},
		{"namespace ends with dash", "ns-/x", Spelling{}, Malformed},
		{"namespace too long", strings.Repeat("n", 64) + "/x", Spelling{}, Malformed},
		{"free text", "failed to sync", Spelling{}, Malformed},
		{"tab", "ns/a\tb", Spelling{}, Malformed},
		{"percent", "ns/a%20b", Spelling{}, Malformed},
		{"dot", "ns/.", Spelling{}, Malformed},
		{"dot dot", "..", Spelling{}, Malformed},
		{"invalid utf8", "ns/\xff", Spelling{}, Malformed},
		{"nbsp", "ns/a\u00a0b", Spelling{}, Malformed},
		{"json text ObjectRef", `{"name":"kubedns","namespace":"kube-system"}`, Spelling{Ref: Ref{Namespace: "kube-system", Name: "kubedns"}}, OK},
		{"json text cluster-scoped", `{"name":"node-1"}`, Spelling{Ref: Ref{Name: "node-1"}, Bare: true}, OK},
		{
			"json text ObjectReference", `{"kind":"Pod","namespace":"default","name":"web-0","uid":"6b1b0f4e-9c2b-4c49-9d0e-1f9a3c7e0a11","apiVersion":"v1","resourceVersion":"42","fieldPath":"spec.containers{app}"}`,
			Spelling{Ref: Ref{Namespace: "default", Name: "web-0", UID: "6b1b0f4e-9c2b-4c49-9d0e-1f9a3c7e0a11", Kind: "Pod", APIVersion: "v1", ResourceVersion: "42", FieldPath: "spec.containers{app}"}, Detailed: true},
			OK,
		},
		{"json text unknown field", `{"name":"a","color":"red"}`, Spelling{}, Malformed},
		{"json text number", `{"name":1}`, Spelling{}, Malformed},
		{"json text no name", `{"namespace":"a"}`, Spelling{}, Malformed},
		{"json text empty name", `{"name":""}`, Spelling{}, Empty},
		{"json text broken", `{"name":"a"`, Spelling{}, Malformed},
		{"json text trailing", `{"name":"a"} x`, Spelling{}, Malformed},
		{"json text bad kind", `{"name":"a","kind":"1Pod"}`, Spelling{}, Malformed},
		{"json text bad apiVersion", `{"name":"a","apiVersion":"apps/v1/x"}`, Spelling{}, Malformed},
		{"json text bad uid", `{"name":"a","uid":"a b"}`, Spelling{}, Malformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := ParseText(tt.in)
			if why != tt.why || got != tt.want {
				t.Fatalf("ParseText(%q) = %+v, %v; want %+v, %v", tt.in, got, why, tt.want, tt.why)
			}
		})
	}
}

func TestFields(t *testing.T) {
	type kv struct{ k, v string }
	tests := []struct {
		name   string
		fields []kv
		other  string
		want   Spelling
		why    Reason
	}{
		{"klog JSON ObjectRef", []kv{{"name", "kubedns"}, {"namespace", "kube-system"}}, "", Spelling{Ref: Ref{Namespace: "kube-system", Name: "kubedns"}}, OK},
		{"klog JSON KRef without namespace", []kv{{"name", "node-1"}}, "", Spelling{Ref: Ref{Name: "node-1"}, Bare: true}, OK},
		{"explicit empty namespace", []kv{{"name", "node-1"}, {"namespace", ""}}, "", Spelling{Ref: Ref{Name: "node-1"}, Bare: true}, OK},
		{
			"event regarding",
			[]kv{{"kind", "Pod"}, {"namespace", "default"}, {"name", "web-0"}, {"uid", "u1"}, {"apiVersion", "v1"}, {"resourceVersion", "7"}, {"fieldPath", "spec.containers{app}"}},
			"",
			Spelling{Ref: Ref{Namespace: "default", Name: "web-0", UID: "u1", Kind: "Pod", APIVersion: "v1", ResourceVersion: "7", FieldPath: "spec.containers{app}"}, Detailed: true},
			OK,
		},
		{"fieldPath only is detail", []kv{{"name", "a"}, {"namespace", "b"}, {"fieldPath", "x"}}, "", Spelling{Ref: Ref{Namespace: "b", Name: "a", FieldPath: "x"}, Detailed: true}, OK},
		{"repeated field", []kv{{"name", "a"}, {"name", "b"}}, "", Spelling{}, Malformed},
		{"unknown field", []kv{{"name", "a"}, {"Name", "a"}}, "", Spelling{}, Malformed},
		{"non-string field", []kv{{"name", "a"}}, "uid", Spelling{}, Malformed},
		{"no name", []kv{{"namespace", "a"}}, "", Spelling{}, Malformed},
		{"empty name", []kv{{"name", ""}}, "", Spelling{}, Empty},
		{"bad namespace", []kv{{"name", "a"}, {"namespace", "A"}}, "", Spelling{}, Malformed},
		{"empty map", nil, "", Spelling{}, Malformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Fields
			for _, p := range tt.fields {
				f.Add(p.k, p.v)
			}
			if tt.other != "" {
				f.AddOther(tt.other)
			}
			got, why := f.Spelling()
			if why != tt.why || got != tt.want {
				t.Fatalf("Spelling() = %+v, %v; want %+v, %v", got, why, tt.want, tt.why)
			}
		})
	}
}

func TestStringAndIsCanonical(t *testing.T) {
	for _, r := range []Ref{{Namespace: "a", Name: "b"}, {Name: "b"}, {Namespace: "kube-system", Name: "x.y"}} {
		s := r.String()
		if !r.IsCanonical(s) {
			t.Errorf("%+v: IsCanonical(%q) = false", r, s)
		}
		got, why := ParseText(s)
		if why != OK || got.Namespace != r.Namespace || got.Name != r.Name {
			t.Errorf("ParseText(%q) = %+v, %v", s, got, why)
		}
	}
	r := Ref{Namespace: "a", Name: "b"}
	for _, s := range []string{"b", "a/bb", "ab/b", "a-b", "/b", "a/b/"} {
		if r.IsCanonical(s) {
			t.Errorf("IsCanonical(%q) = true", s)
		}
	}
	if (Ref{Name: "b"}).IsCanonical("/b") {
		t.Error(`"/b" is not canonical for a cluster-scoped ref`)
	}
}

func TestReasons(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Reasons() {
		s := r.String()
		if s == "ok" || s == "unknown" || s == "" || seen[s] {
			t.Fatalf("reason %d has bad or duplicate name %q", r, s)
		}
		seen[s] = true
	}
	if Reason(200).String() != "unknown" {
		t.Fatal("out-of-range reason")
	}
}

// TestParseJSONMatchesEncodingJSON checks the direct JSON reader against encoding/json.
func TestParseJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{"name":"a","namespace":"b"}`,
		` { "name" : "a" , "namespace" : "b" } `,
		`{"name":"a\u0062","namespace":"b"}`,
		`{"name":"a\"b"}`,
		`{"name":"a","namespace":"b",}`,
		`{"name":"a" "namespace":"b"}`,
		`{"name":"a"}}`,
		`{}`,
		`{"name":null}`,
		`{"name":"a\x01"}`,
		`{"name":"a\q"}`,
		"{\"name\":\"\xff\"}",
		`{"name":"a","name":"b"}`,
		`{"name":"a`,
		`{"name"`,
		`{`,
	} {
		got, why := ParseJSON(s)
		var m map[string]any
		err := json.Unmarshal([]byte(s), &m)
		if err != nil && why == OK {
			t.Errorf("ParseJSON(%q) accepted invalid JSON: %+v", s, got)
		}
		if err == nil && why == OK {
			if got.Name != m["name"] {
				t.Errorf("ParseJSON(%q) name %q, encoding/json %q", s, got.Name, m["name"])
			}
		}
	}
}
