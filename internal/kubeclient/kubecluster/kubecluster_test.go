// SPDX-License-Identifier: Apache-2.0

package kubecluster

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestCluster starts the real server: the kubeconfig exists, /readyz answers ok with its
// credentials, the system namespaces exist, the administrator may read a namespace and an
// anonymous client may not.
func TestCluster(t *testing.T) {
	c := Start(t)
	if _, err := os.Stat(c.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Host, "https://127.0.0.1:") {
		t.Fatalf("Host = %q, want a loopback https URL", c.Host)
	}
	admin, err := c.HTTPClient(true)
	if err != nil {
		t.Fatal(err)
	}
	anonymous, err := c.HTTPClient(false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		client *http.Client
		path   string
		status int
		check  func(t *testing.T, body []byte)
	}{
		{"readyz", admin, "/readyz", http.StatusOK, func(t *testing.T, body []byte) {
			if string(body) != "ok" {
				t.Errorf("/readyz body %q, want ok", body)
			}
		}},
		{"admin reads a namespace", admin, "/api/v1/namespaces/default", http.StatusOK, func(t *testing.T, body []byte) {
			var ns struct {
				Metadata struct{ Name, UID string }
			}
			if err := json.Unmarshal(body, &ns); err != nil {
				t.Fatal(err)
			}
			if ns.Metadata.Name != "default" || ns.Metadata.UID == "" {
				t.Errorf("namespace default: %s", body)
			}
		}},
		{"system namespaces exist at ready", admin, "/api/v1/namespaces/kube-node-lease", http.StatusOK, nil},
		{"anonymous may not", anonymous, "/api/v1/namespaces/default", http.StatusForbidden, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.client.Get(c.Host + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("GET %s: %s, want %d: %.300s", tt.path, resp.Status, tt.status, body)
			}
			if tt.check != nil {
				tt.check(t, body)
			}
		})
	}
}

// recorder stands in for the test handed to Start: it records Skip and Fatal instead of
// ending the real test, and ends Start's goroutine like they would.
type recorder struct {
	*testing.T
	mu      sync.Mutex
	skipped string
	fatal   string
}

func (r *recorder) Skip(args ...any)  { r.set(&r.skipped, args...) }
func (r *recorder) Fatal(args ...any) { r.set(&r.fatal, args...) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.set(&r.fatal, strings.TrimSpace(fmt.Sprintf(format, args...)))
}
func (r *recorder) Errorf(format string, args ...any) { r.Logf("(recorded) "+format, args...) }

func (r *recorder) set(field *string, args ...any) {
	r.mu.Lock()
	*field = strings.TrimSpace(fmt.Sprintln(args...))
	r.mu.Unlock()
	runtime.Goexit()
}

// TestStartWithoutServer checks what Start does when it cannot run a server.
func TestStartWithoutServer(t *testing.T) {
	falseBin, err := exec.LookPath("false")
	if err != nil {
		t.Skip("no false command")
	}
	tests := []struct {
		name              string
		bin, ci           string
		wantSkip, wantErr string
	}{
		{name: "unset skips", wantSkip: EnvBin + " is not set"},
		{name: "unset under CI fails", ci: "true", wantErr: EnvBin + " is not set"},
		{name: "missing binary fails", bin: "/nonexistent/kube-local", wantErr: "start /nonexistent/kube-local"},
		{name: "early exit fails", bin: falseBin, wantErr: "exited before it was ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvBin, tt.bin)
			t.Setenv("CI", tt.ci)
			r := &recorder{T: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				Start(r)
				t.Error("Start returned a cluster")
			}()
			<-done
			r.mu.Lock()
			defer r.mu.Unlock()
			if tt.wantSkip != "" && !strings.Contains(r.skipped, tt.wantSkip) {
				t.Errorf("skip %q, want one containing %q (fatal %q)", r.skipped, tt.wantSkip, r.fatal)
			}
			if tt.wantErr != "" && !strings.Contains(r.fatal, tt.wantErr) {
				t.Errorf("fatal %q, want one containing %q (skip %q)", r.fatal, tt.wantErr, r.skipped)
			}
			if (tt.wantSkip == "") != (r.skipped == "") || (tt.wantErr == "") != (r.fatal == "") {
				t.Errorf("skipped %q, fatal %q", r.skipped, r.fatal)
			}
		})
	}
}

// TestFromAPIServer: an Event's reporting controller names the API server's own recorders, and
// only those, exactly.
func TestFromAPIServer(t *testing.T) {
	tests := []struct {
		controller string
		want       bool
	}{
		{"ipallocator-repair-controller", true},
		{"portallocator-repair-controller", true},
		{"kubernetes-service-cidr-controller", true},
		{"", false},
		{"kubelet", false},
		{"test/faults", false},
		{"ipallocator-repair-controller-1", false},
	}
	for _, tt := range tests {
		if got := FromAPIServer(tt.controller); got != tt.want {
			t.Errorf("FromAPIServer(%q) = %v, want %v", tt.controller, got, tt.want)
		}
	}
}
