// SPDX-License-Identifier: Apache-2.0

package objref

import (
	"strings"
	"testing"
)

func TestSplitAPIVersion(t *testing.T) {
	for _, tc := range []struct {
		in, group, version string
		ok                 bool
	}{
		{"v1", "", "v1", true},
		{"apps/v1", "apps", "v1", true},
		{"events.k8s.io/v1", "events.k8s.io", "v1", true},
		{"cert-manager.io/v1alpha2", "cert-manager.io", "v1alpha2", true},
		{"", "", "", true},
		// The API server's parser reads "/v1" as the core group and "apps/" as an empty version;
		// where that matters (a reference in a log line), validAPIVersion refuses them first.
		{"/v1", "", "v1", true},
		{"apps/", "apps", "", true},
		{"a/b/c", "", "", false},
		{"apps/v1/", "", "", false},
		{"//", "", "", false},
	} {
		group, version, ok := SplitAPIVersion(tc.in)
		if group != tc.group || version != tc.version || ok != tc.ok {
			t.Errorf("SplitAPIVersion(%q) = %q, %q, %v; want %q, %q, %v", tc.in, group, version, ok, tc.group, tc.version, tc.ok)
		}
		if g := APIGroup(tc.in); g != tc.group {
			t.Errorf("APIGroup(%q) = %q, want %q", tc.in, g, tc.group)
		}
		if g := (Ref{APIVersion: tc.in}).Group(); g != tc.group {
			t.Errorf("Ref{APIVersion: %q}.Group() = %q, want %q", tc.in, g, tc.group)
		}
	}
}

// TestLookupRefusesAMalformedAPIVersion: an apiVersion with two slashes names no group, so it
// finds no kind, not the core group's.
func TestLookupRefusesAMalformedAPIVersion(t *testing.T) {
	if k := Builtin().Lookup("apps/v1/x", "Pod"); k != nil {
		t.Fatalf("Lookup(apps/v1/x, Pod) = %+v, want nil", k)
	}
	if k := Builtin().Lookup("apps/v1", "ReplicaSet"); k == nil || k.Resource != "replicasets" {
		t.Fatalf("Lookup(apps/v1, ReplicaSet) = %+v", k)
	}
}

// FuzzSplitAPIVersion: an accepted apiVersion is its group and version joined back, the group
// holds no '/', the version holds none; a refused one has more than one '/'.
func FuzzSplitAPIVersion(f *testing.F) {
	for _, s := range []string{"v1", "apps/v1", "", "/", "a/b/c", "apps/", "/v1", "\xff/v1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		group, version, ok := SplitAPIVersion(s)
		if !ok {
			if strings.Count(s, "/") < 2 || group != "" || version != "" {
				t.Fatalf("SplitAPIVersion(%q) refused with %q, %q", s, group, version)
			}
			return
		}
		if strings.Contains(group, "/") || strings.Contains(version, "/") {
			t.Fatalf("SplitAPIVersion(%q) = %q, %q: a part holds '/'", s, group, version)
		}
		joined := version
		if strings.Contains(s, "/") {
			joined = group + "/" + version
		}
		if joined != s {
			t.Fatalf("SplitAPIVersion(%q) = %q, %q: joined back %q", s, group, version, joined)
		}
	})
}
