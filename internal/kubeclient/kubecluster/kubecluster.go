// SPDX-License-Identifier: Apache-2.0

// Package kubecluster starts a real Kubernetes API server for Go tests: the binary built by
// `make kube-bin` from testbed/kubecluster/server (an embedded etcd and kube-apiserver, in one
// process, on loopback ports). Tests reach it through the kubeconfig it writes, exactly as a
// component configured with a kubeconfig would.
//
// The binary is named by the environment variable OTELCOL_K8S_KUBE_BIN, which `make test-modules`
// sets. Without it Start skips the test, except under CI (CI=true), where that is a failure.
//
// Each Start runs its own server (a few seconds of start-up, and a few hundred MiB): a package
// whose tests need a cluster should start one and share it between subtests.
//
// It lives in internal/kubeclient (standard library only), which every component that watches
// the cluster already requires, so that no component's go.mod names a test-only module.
package kubecluster

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvBin is the environment variable naming the server binary.
const EnvBin = "OTELCOL_K8S_KUBE_BIN"

// Timeouts of Start and of the clean-up; variables so that the package's own tests can shorten
// them.
var (
	ReadyTimeout = 2 * time.Minute  // from exec to the server's "ready" line
	StopTimeout  = 30 * time.Second // from SIGTERM to exit; then the process is killed
)

// logTail is how much of the server's stderr is kept for failure messages.
const logTail = 64 << 10

// apiServerControllers are the controllers inside kube-apiserver that write Events: the Service
// address and port repair and the default ServiceCIDR's.
var apiServerControllers = []string{"ipallocator-repair-controller", "portallocator-repair-controller", "kubernetes-service-cidr-controller"}

// FromAPIServer reports whether an Event with this reporting controller (for a core/v1 Event,
// source component) was written by the API server itself. On a loaded machine its address
// repair may run before the default Service's address is recorded and write a
// ClusterIPNotAllocated Warning about that Service while a test runs: a test that counts Events
// counts those it wrote.
func FromAPIServer(reportingController string) bool {
	return slices.Contains(apiServerControllers, reportingController)
}

// Cluster is a running API server.
type Cluster struct {
	// Kubeconfig is the path of a kubeconfig file (JSON) for an administrator of the cluster
	// (group system:masters). It lives in a temporary directory of the test.
	Kubeconfig string
	// Host is the API server's URL, https://127.0.0.1:PORT.
	Host string
	// Token is the administrator's bearer token.
	Token string
	// CA is the PEM certificate bundle that the API server's serving certificate verifies with.
	CA []byte

	log *tailBuffer
}

// Start runs the server named by OTELCOL_K8S_KUBE_BIN, waits until it is ready and registers
// its shutdown (SIGTERM, then SIGKILL after StopTimeout) with t.Cleanup. It fails the test,
// with the end of the server's log, when the server does not start.
func Start(t testing.TB) *Cluster {
	t.Helper()
	return StartWith(t)
}

// StartWith is Start with extra flags for the server binary, for example
// "-etcd-compaction-interval=1s", "-watch-cache=false" (a watch resumed from a compacted
// resource version then gets 410 Gone, as from an API server without a watch cache entry).
func StartWith(t testing.TB, flags ...string) *Cluster {
	t.Helper()
	bin := os.Getenv(EnvBin)
	if bin == "" {
		const msg = EnvBin + " is not set: build the local API server with `make kube-bin` and run the tests through `make test-modules`"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	c := &Cluster{Kubeconfig: filepath.Join(t.TempDir(), "kubeconfig"), log: &tailBuffer{max: logTail}}
	cmd := exec.Command(bin, append([]string{"-kubeconfig", c.Kubeconfig}, flags...)...) //nolint:gosec // the server binary the test run names (OTELCOL_K8S_KUBE_BIN)
	cmd.Stderr = c.log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("kubecluster: start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "ready ") {
				select {
				case ready <- line:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait() // after the pipe is drained, as exec requires
	}()
	t.Cleanup(func() { c.stop(t, cmd, exited) })

	select {
	case <-ready:
	case err := <-exited:
		exited <- err // for the clean-up
		t.Fatalf("kubecluster: %s exited before it was ready: %v\n%s", bin, err, c.Log())
	case <-time.After(ReadyTimeout):
		t.Fatalf("kubecluster: %s not ready after %v\n%s", bin, ReadyTimeout, c.Log())
	}
	if err := c.load(); err != nil {
		t.Fatalf("kubecluster: %v\n%s", err, c.Log())
	}
	return c
}

func (c *Cluster) stop(t testing.TB, cmd *exec.Cmd, exited chan error) {
	select {
	case err := <-exited: // already gone
		if t.Failed() {
			t.Logf("kubecluster: the server had exited (%v); its log ends with:\n%s", err, c.Log())
		}
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("kubecluster: the server did not stop cleanly: %v\n%s", err, c.Log())
		} else if t.Failed() {
			t.Logf("kubecluster: the server's log ends with:\n%s", c.Log())
		}
	case <-time.After(StopTimeout):
		_ = cmd.Process.Kill()
		<-exited
		t.Errorf("kubecluster: the server did not stop within %v of SIGTERM and was killed\n%s", StopTimeout, c.Log())
	}
}

// kubeconfig is the part of the file that the server writes which Start reads back.
type kubeconfig struct {
	Clusters []struct {
		Cluster struct {
			Server string `json:"server"`
			CAData []byte `json:"certificate-authority-data"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		User struct {
			Token string `json:"token"`
		} `json:"user"`
	} `json:"users"`
}

func (c *Cluster) load() error {
	data, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return err
	}
	var kc kubeconfig
	if err := json.Unmarshal(data, &kc); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", c.Kubeconfig, err)
	}
	if len(kc.Clusters) != 1 || len(kc.Users) != 1 {
		return fmt.Errorf("kubeconfig %s: want one cluster and one user, got %d and %d", c.Kubeconfig, len(kc.Clusters), len(kc.Users))
	}
	c.Host, c.CA = kc.Clusters[0].Cluster.Server, kc.Clusters[0].Cluster.CAData
	c.Token = kc.Users[0].User.Token
	if c.Host == "" || len(c.CA) == 0 || c.Token == "" {
		return fmt.Errorf("kubeconfig %s: server, certificate-authority-data or token missing", c.Kubeconfig)
	}
	return nil
}

// HTTPClient returns a client that trusts the server's certificate and, when authenticated is
// true, sends the administrator's token with every request.
func (c *Cluster) HTTPClient(authenticated bool) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.CA) {
		return nil, errors.New("kubecluster: no certificate in CA")
	}
	var rt http.RoundTripper = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	if authenticated {
		rt = bearer{token: c.Token, next: rt}
	}
	return &http.Client{Transport: rt, Timeout: 30 * time.Second}, nil
}

// Log returns the end of the server's stderr (at most 64 KiB).
func (c *Cluster) Log() string { return c.log.String() }

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.dropped = true
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped {
		return "[...]" + string(b.buf)
	}
	return string(b.buf)
}
