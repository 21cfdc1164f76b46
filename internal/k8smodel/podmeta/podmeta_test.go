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

func TestTraceAnnotation(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"trace.kubernetes.io/context", true},
		{"tracing.k8s.io/traceparent", true},
		{"tracing.k8s.io/tracestate", true},
		{"trace.kubernetes.io/other", false},
		{"deployment.kubernetes.io/revision", false},
		{"", false},
	} {
		if got := TraceAnnotation(tc.key); got != tc.want {
			t.Errorf("TraceAnnotation(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}
