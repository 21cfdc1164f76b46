// SPDX-License-Identifier: Apache-2.0

package podpath

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		path string
		want Meta
		ok   bool
	}{
		{
			"/var/log/pods/kube-system_coredns-5d78c9869d-abcde_0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/coredns/0.log",
			Meta{Namespace: "kube-system", PodName: "coredns-5d78c9869d-abcde", PodUID: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", ContainerName: "coredns", RestartCount: 0},
			true,
		},
		{
			"/var/log/pods/default_web-0_1234/nginx/12.log.20240101-120000",
			Meta{Namespace: "default", PodName: "web-0", PodUID: "1234", ContainerName: "nginx", RestartCount: 12},
			true,
		},
		{
			"/var/log/pods/0f1e2d3c-4b5a-6978/sidecar-proxy_3.log",
			Meta{PodUID: "0f1e2d3c-4b5a-6978", ContainerName: "sidecar-proxy", RestartCount: 3},
			true,
		},
		{
			"/var/log/containers/web-0_default_nginx-" + id + ".log",
			Meta{Namespace: "default", PodName: "web-0", ContainerName: "nginx", ContainerID: id, RestartCount: -1},
			true,
		},
		{
			"/var/log/containers/my-pod_ns_my-long-container-" + id + ".log",
			Meta{Namespace: "ns", PodName: "my-pod", ContainerName: "my-long-container", ContainerID: id, RestartCount: -1},
			true,
		},
		{`C:\var\log\pods\ns_pod_uid\c\1.log`, Meta{Namespace: "ns", PodName: "pod", PodUID: "uid", ContainerName: "c", RestartCount: 1}, true},
		{"/var/log/pods/bad-dir/c/0.log", Meta{RestartCount: -1}, false},
		{"/var/log/pods/ns_pod_uid/c/0.txt", Meta{RestartCount: -1}, false},
		{"/var/log/syslog.log", Meta{RestartCount: -1}, false},
		{"/var/log/containers/a_b_c-nothex.log", Meta{RestartCount: -1}, false},
		{"0.log", Meta{RestartCount: -1}, false},
		{"", Meta{RestartCount: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, ok := Parse(tt.path)
			if ok != tt.ok || got != tt.want {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestIsRotated(t *testing.T) {
	for name, want := range map[string]bool{
		"0.log":                        false,
		"0.log.20240101-120000":        true,
		"0.log.20240101-120000.gz":     true,
		"0.log.gz":                     true,
		"0.log.old":                    false,
		"web_default_c-abc.log":        false,
		"0.log.20240101-12000":         false,
		"0.log.tmp":                    true,
		"0.log.20240101-120000.tmp.gz": true,
	} {
		if got := IsRotated(name); got != want {
			t.Errorf("%s: got %v", name, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("/var/log/pods/ns_pod_uid/c/0.log")
	f.Add("/var/log/pods/uid/c_1.log")
	f.Add("/var/log/containers/p_n_c-0123456789abcdef.log")
	f.Fuzz(func(t *testing.T, p string) {
		m, ok := Parse(p)
		if !ok {
			return
		}
		for _, s := range []string{m.Namespace, m.PodName, m.PodUID, m.ContainerName} {
			if strings.ContainsAny(s, "/_") {
				t.Fatalf("%q: field %q holds a separator", p, s)
			}
		}
		if m.ContainerName == "" {
			t.Fatalf("%q: no container name", p)
		}
	})
}
