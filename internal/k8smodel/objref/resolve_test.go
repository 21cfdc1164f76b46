// SPDX-License-Identifier: Apache-2.0

package objref

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

const uid1 = "6b1b0f4e-9c2b-4c49-9d0e-1f9a3c7e0a11"

func TestCanonicalize(t *testing.T) {
	tests := []struct {
		name string
		in   Ref
		want Ref
		why  Reason
	}{
		{
			"pod gets its apiVersion",
			Ref{Kind: "Pod", Namespace: "default", Name: "web-0"},
			Ref{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web-0"},
			OK,
		},
		{
			"deployment gets apps/v1",
			Ref{Kind: "Deployment", Namespace: "shop", Name: "cart"},
			Ref{Kind: "Deployment", APIVersion: "apps/v1", Namespace: "shop", Name: "cart"},
			OK,
		},
		{
			"stated apiVersion kept",
			Ref{Kind: "Deployment", APIVersion: "apps/v1beta2", Namespace: "shop", Name: "cart"},
			Ref{Kind: "Deployment", APIVersion: "apps/v1beta2", Namespace: "shop", Name: "cart"},
			OK,
		},
		// Regression: kubelet's node references carry the node name as uid.
		{
			"kubelet node uid is the name",
			Ref{Kind: "Node", Name: "ip-10-0-1-23.ec2.internal", UID: "ip-10-0-1-23.ec2.internal"},
			Ref{Kind: "Node", APIVersion: "v1", Name: "ip-10-0-1-23.ec2.internal"},
			OK,
		},
		{
			"real node uid kept",
			Ref{Kind: "Node", Name: "node-1", UID: uid1},
			Ref{Kind: "Node", APIVersion: "v1", Name: "node-1", UID: uid1},
			OK,
		},
		// Regression: a Knative Service is not a core Service; no core rule or scope applies.
		{
			"knative service",
			Ref{Kind: "Service", APIVersion: "serving.knative.dev/v1", Namespace: "default", Name: "Hello_World"},
			Ref{Kind: "Service", APIVersion: "serving.knative.dev/v1", Namespace: "default", Name: "Hello_World"},
			OK,
		},
		{"core service name is a DNS-1035 label", Ref{Kind: "Service", Namespace: "default", Name: "1web"}, Ref{}, Malformed},
		{"core service with a dot", Ref{Kind: "Service", Namespace: "default", Name: "web.v1"}, Ref{}, Malformed},
		{"pod name with uppercase", Ref{Kind: "Pod", Namespace: "default", Name: "Web"}, Ref{}, Malformed},
		{
			"pod name with a dot",
			Ref{Kind: "Pod", Namespace: "default", Name: "web.v1"},
			Ref{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web.v1"},
			OK,
		},
		{"namespace names are labels", Ref{Kind: "Namespace", Name: "a.b"}, Ref{}, Malformed},
		// Regression: a value that is not a valid namespace name is never a namespace.
		{"invalid namespace", Ref{Kind: "Pod", Namespace: "Not_A_Namespace", Name: "web"}, Ref{}, Malformed},
		{
			"cluster role with colons",
			Ref{Kind: "ClusterRole", Name: "system:controller:job-controller"},
			Ref{Kind: "ClusterRole", APIVersion: "rbac.authorization.k8s.io/v1", Name: "system:controller:job-controller"},
			OK,
		},
		{"pod without namespace", Ref{Kind: "Pod", Name: "web"}, Ref{}, MissingNamespace},
		{"node with namespace", Ref{Kind: "Node", Namespace: "default", Name: "n"}, Ref{}, UnexpectedNamespace},
		{
			"unknown kind, either scope",
			Ref{Kind: "Certificate", APIVersion: "cert-manager.io/v1", Name: "c"},
			Ref{Kind: "Certificate", APIVersion: "cert-manager.io/v1", Name: "c"},
			OK,
		},
		{"empty name", Ref{Kind: "Pod", Namespace: "default"}, Ref{}, Empty},
		{"bad kind", Ref{Kind: "1Pod", Namespace: "default", Name: "a"}, Ref{}, Malformed},
		{"bad uid", Ref{Kind: "Pod", Namespace: "default", Name: "a", UID: "a b"}, Ref{}, Malformed},
		{"control character in field path", Ref{Kind: "Pod", Namespace: "default", Name: "a", FieldPath: "spec\x00"}, Ref{}, Malformed},
		{
			"event regarding with field path",
			Ref{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "a", UID: uid1, FieldPath: "spec.containers{app}", ResourceVersion: "42"},
			Ref{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "a", UID: uid1, FieldPath: "spec.containers{app}", ResourceVersion: "42"},
			OK,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			why := Canonicalize(&got)
			if why != tt.why {
				t.Fatalf("Canonicalize(%+v) = %v, want %v", tt.in, why, tt.why)
			}
			if why != OK {
				if got != tt.in {
					t.Fatalf("rejected reference changed: %+v", got)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("Canonicalize(%+v) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	text := func(s string) Spelling {
		sp, why := ParseText(s)
		if why != OK {
			t.Fatalf("ParseText(%q): %v", s, why)
		}
		return sp
	}
	tests := []struct {
		name     string
		sp       Spelling
		ctx      Context
		want     Ref
		wantPort string
		why      Reason
	}{
		{
			"klog KObj pod", text("kube-system/kubedns"),
			Context{Kind: "Pod"},
			Ref{Kind: "Pod", APIVersion: "v1", Namespace: "kube-system", Name: "kubedns"},
			"", OK,
		},
		{
			"bare pod with sibling namespace", text("kubedns"),
			Context{Kind: "Pod", Namespace: "kube-system", HasNamespace: true},
			Ref{Kind: "Pod", APIVersion: "v1", Namespace: "kube-system", Name: "kubedns"},
			"", OK,
		},
		{
			"bare pod with sibling uid", text("kubedns"),
			Context{Kind: "Pod", Namespace: "kube-system", HasNamespace: true, UID: uid1},
			Ref{Kind: "Pod", APIVersion: "v1", Namespace: "kube-system", Name: "kubedns", UID: uid1},
			"", OK,
		},
		{"bare pod without namespace", text("kubedns"), Context{Kind: "Pod"}, Ref{}, "", MissingNamespace},
		{"bare pod with invalid sibling namespace", text("kubedns"), Context{Kind: "Pod", Namespace: "Not Valid", HasNamespace: true}, Ref{}, "", Malformed},
		{"explicitly empty namespace", text("/kubedns"), Context{Kind: "Pod", Namespace: "kube-system", HasNamespace: true}, Ref{}, "", MissingNamespace},
		{
			"node", text("node-1"),
			Context{Kind: "Node", Namespace: "default", HasNamespace: true},
			Ref{Kind: "Node", APIVersion: "v1", Name: "node-1"},
			"", OK,
		},
		{"node with namespace", text("default/node-1"), Context{Kind: "Node"}, Ref{}, "", UnexpectedNamespace},
		// Regression: kube-proxy's service port names, namespace/name:port.
		{
			"kube-proxy service port", text("default/kubernetes:https"),
			Context{Kind: "Service"},
			Ref{Kind: "Service", APIVersion: "v1", Namespace: "default", Name: "kubernetes"},
			"https", OK,
		},
		{
			"kube-proxy numeric port", text("kube-system/kube-dns:53"),
			Context{Kind: "Service"},
			Ref{Kind: "Service", APIVersion: "v1", Namespace: "kube-system", Name: "kube-dns"},
			"53", OK,
		},
		{"colon in a pod name is not a port", text("default/a:b"), Context{Kind: "Pod"}, Ref{}, "", Malformed},
		{"unknown kind bare", text("c"), Context{Kind: "Certificate"}, Ref{}, "", UnknownKind},
		{
			"unknown kind namespaced", text("default/c"),
			Context{Kind: "Certificate"},
			Ref{Kind: "Certificate", Namespace: "default", Name: "c"},
			"", OK,
		},
		{"kind mismatch", Spelling{Ref: Ref{Kind: "Node", Name: "n"}, Bare: true, Detailed: true}, Context{Kind: "Pod"}, Ref{}, "", KindMismatch},
		{
			"own kind",
			Spelling{Ref: Ref{Kind: "ReplicaSet", Namespace: "kube-system", Name: "coredns-5d78"}, Detailed: true},
			Context{},
			Ref{Kind: "ReplicaSet", APIVersion: "apps/v1", Namespace: "kube-system", Name: "coredns-5d78"},
			"", OK,
		},
		{"no kind at all", text("default/x"), Context{}, Ref{Namespace: "default", Name: "x"}, "", OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, port, why := Builtin().Resolve(tt.sp, tt.ctx)
			if why != tt.why || got != tt.want || port != tt.wantPort {
				t.Fatalf("Resolve = %+v, %q, %v; want %+v, %q, %v", got, port, why, tt.want, tt.wantPort, tt.why)
			}
		})
	}
}

func TestLookupConsidersTheGroup(t *testing.T) {
	tab := Builtin()
	if k := tab.Lookup("serving.knative.dev/v1", "Service"); k != nil {
		t.Fatalf("a Knative Service found as %+v", k)
	}
	if k := tab.Lookup("v1", "Service"); k == nil || k.Group != "" || !k.Namespaced {
		t.Fatalf("core Service: %+v", k)
	}
	if k := tab.Lookup("", "Event"); k == nil || k.Group != "" {
		t.Fatalf("Event without apiVersion is the core Event: %+v", k)
	}
	if k := tab.Lookup("events.k8s.io/v1", "Event"); k == nil || k.Group != "events.k8s.io" {
		t.Fatalf("events.k8s.io Event: %+v", k)
	}
	custom := NewTable(Kind{Kind: "Certificate", Group: "cert-manager.io", Version: "v1", Resource: "certificates", Namespaced: true, Names: Subdomain})
	if k := custom.Lookup("", "Certificate"); k == nil || k.APIVersion() != "cert-manager.io/v1" {
		t.Fatalf("custom kind: %+v", k)
	}
}

func TestKey(t *testing.T) {
	for _, tt := range []struct {
		ref  Ref
		want string
	}{
		{Ref{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web-0"}, "Pod/default/web-0"},
		{Ref{Kind: "Node", APIVersion: "v1", Name: "node-1"}, "Node/node-1"},
		{Ref{Kind: "Deployment", APIVersion: "apps/v1", Namespace: "shop", Name: "cart"}, "Deployment.apps/shop/cart"},
		{Ref{Kind: "Service", APIVersion: "serving.knative.dev/v1", Namespace: "default", Name: "hello"}, "Service.serving.knative.dev/default/hello"},
		{Ref{Kind: "ClusterRole", APIVersion: "rbac.authorization.k8s.io/v1", Name: "system:kube-scheduler"}, "ClusterRole.rbac.authorization.k8s.io/system:kube-scheduler"},
	} {
		if got := tt.ref.Key(); got != tt.want {
			t.Errorf("Key(%+v) = %q, want %q", tt.ref, got, tt.want)
		}
	}
}

func TestParseList(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{`["kube-system/kube-dns","default/nginx"]`, []string{"kube-system/kube-dns", "default/nginx"}, true},
		{`["a",null,"b"]`, []string{"a", "b"}, true},
		{`[]`, nil, true},
		{` [ "a" ] `, []string{"a"}, true},
		{`["a",]`, nil, false},
		{`["a"`, nil, false},
		{`[a]`, nil, false},
		{`["a"] x`, nil, false},
		{`kube-system/kube-dns`, nil, false},
	} {
		got, ok := ParseList(tt.in)
		if ok != tt.ok || len(got) != len(tt.want) {
			t.Errorf("ParseList(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("ParseList(%q)[%d] = %q, want %q", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

func TestPut(t *testing.T) {
	m := pcommon.NewMap()
	m.PutStr("k8s.pod.name", "producer-pod")
	Put(m, attr.Subject, Ref{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web-0", UID: uid1})
	Put(m, attr.Related, Ref{Kind: "Node", APIVersion: "v1", Name: "node-1"})
	want := map[string]any{
		"k8s.pod.name":                    "producer-pod",
		"otelcol_k8s.object.kind":         "Pod",
		"otelcol_k8s.object.api_version":  "v1",
		"otelcol_k8s.object.namespace":    "default",
		"otelcol_k8s.object.name":         "web-0",
		"otelcol_k8s.object.uid":          uid1,
		"otelcol_k8s.related.kind":        "Node",
		"otelcol_k8s.related.api_version": "v1",
		"otelcol_k8s.related.name":        "node-1",
	}
	got := m.AsRaw()
	if len(got) != len(want) {
		t.Fatalf("Put wrote %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
