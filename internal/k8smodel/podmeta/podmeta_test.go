// SPDX-License-Identifier: Apache-2.0

package podmeta

import "testing"

func TestTruthy(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"true", true},
		{"True", true},
		{" TRUE\t", true},
		{"", false},
		{"yes", false},
		{"1", false},
		{"false", false},
		{"truee", false},
	} {
		if got := Truthy(tc.in); got != tc.want {
			t.Errorf("Truthy(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestOwner(t *testing.T) {
	p := &Pod{Owners: []Owner{{Kind: KindReplicaSet, Name: "web-5d8f"}, {Kind: KindDeployment, Name: "web"}}}
	for _, tc := range []struct{ kind, want string }{
		{KindReplicaSet, "web-5d8f"},
		{KindDeployment, "web"},
		{KindJob, ""},
	} {
		if got := p.Owner(tc.kind); got != tc.want {
			t.Errorf("Owner(%s) = %q, want %q", tc.kind, got, tc.want)
		}
	}
	if got := (&Pod{}).Owner(KindDeployment); got != "" {
		t.Errorf("a bare Pod's Deployment = %q", got)
	}
}
