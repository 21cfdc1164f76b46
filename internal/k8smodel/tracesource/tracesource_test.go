// SPDX-License-Identifier: Apache-2.0

package tracesource

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/trace"
)

type source struct{}

func (source) SpanContextForObject(context.Context, string, string, string, string, string) (trace.SpanContext, bool, bool) {
	return trace.SpanContext{}, false, false
}

type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }

type ext struct {
	component.StartFunc
	component.ShutdownFunc
}

type sourceExt struct {
	ext
	source
}

func TestFind(t *testing.T) {
	good := component.MustNewID("trace_context")
	bad := component.MustNewIDWithName("trace_context", "bad")
	missing := component.MustNewIDWithName("trace_context", "missing")
	h := host{good: sourceExt{}, bad: ext{}}
	for _, tc := range []struct {
		name    string
		id      component.ID
		wantErr string
	}{
		{"implements", good, ""},
		{"does not implement", bad, `kube_events: trace_context: extension "trace_context/bad" (tracesource.ext) does not implement SpanContextForObject`},
		{"not configured", missing, `kube_events: trace_context: extension "trace_context/missing" is not configured`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := Find(h, tc.id, "kube_events: trace_context")
			if tc.wantErr == "" {
				if err != nil || src == nil {
					t.Fatalf("Find = %v, %v; want the source", src, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Fatalf("Find error = %v; want prefix %q", err, tc.wantErr)
			}
		})
	}
}

type trustingSource struct {
	source
	namespace string
}

func (s trustingSource) TrustsContext(kind, namespace string) bool {
	return kind == "Deployment" && namespace == s.namespace
}

func TestTrusted(t *testing.T) {
	for _, tc := range []struct {
		name            string
		src             Source
		kind, namespace string
		want            bool
	}{
		{"no source: nothing to apply", nil, "Pod", "shop", true},
		{"a source without Trust trusts all", source{}, "Pod", "shop", true},
		{"trusted kind and namespace", trustingSource{namespace: "shop"}, "Deployment", "shop", true},
		{"untrusted kind", trustingSource{namespace: "shop"}, "Pod", "shop", false},
		{"untrusted namespace", trustingSource{namespace: "shop"}, "Deployment", "other", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Trusted(tc.src, tc.kind, tc.namespace); got != tc.want {
				t.Fatalf("Trusted(%q, %q) = %v; want %v", tc.kind, tc.namespace, got, tc.want)
			}
		})
	}
}
