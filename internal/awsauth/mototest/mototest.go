// SPDX-License-Identifier: Apache-2.0

// Package mototest runs moto's CloudWatch Logs server (`python3 -m moto.server`, a third-party
// implementation installed with the machine's Python) for tests, so that the same checks run
// against moto and against the project's local server (testbed/localcloudwatch) or a client
// (the cloudwatch_groups exporter). Standard library only, in the shared AWS module so that a
// component's tests use it without a test-only module in the component's go.mod.
//
// One moto process serves every test of a test binary: it starts on first use on a free
// loopback port and each Endpoint call resets its state. Without moto a test is skipped,
// except under CI (CI=true), where it fails.
package mototest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// server is the moto process shared by the tests of this binary.
var server struct {
	once     sync.Once
	cmd      *exec.Cmd
	exited   chan struct{}
	endpoint string
	err      error // start failure
	missing  bool  // moto (or python3) is not installed
}

// Endpoint returns the URL of the shared moto server, with its state reset.
func Endpoint(t testing.TB) string {
	t.Helper()
	server.once.Do(start)
	if server.err != nil {
		if server.missing && os.Getenv("CI") != "true" {
			t.Skipf("moto not available (set CI=true to make this a failure): %v", server.err)
		}
		t.Fatalf("moto: %v", server.err)
	}
	resp, err := http.Post(server.endpoint+"/moto-api/reset", "application/json", nil)
	if err != nil {
		t.Fatalf("moto reset: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("moto reset answered %s", resp.Status)
	}
	return server.endpoint
}

// Pid returns the process id of the shared moto server, or 0 before it started.
func Pid() int {
	if server.cmd == nil || server.cmd.Process == nil {
		return 0
	}
	return server.cmd.Process.Pid
}

// Stop ends the shared moto server. A TestMain calls it after m.Run; on Linux the server also
// dies with the test binary.
func Stop() {
	if server.cmd != nil && server.exited != nil {
		_ = server.cmd.Process.Kill()
		<-server.exited
	}
}

func start() {
	python, err := exec.LookPath("python3")
	if err != nil {
		server.err, server.missing = err, true
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		server.err = err
		return
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()

	var out bytes.Buffer
	cmd := exec.Command(python, "-m", "moto.server", "-H", "127.0.0.1", "-p", strconv.Itoa(port)) //nolint:gosec // python3 as found on PATH
	// moto's own boto setup must not see a test's AWS_* settings (an empty AWS_PROFILE breaks it).
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	dieWithParent(cmd)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		server.err = err
		return
	}
	server.cmd = cmd
	server.exited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(server.exited) }()

	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case <-server.exited:
			server.err = fmt.Errorf("moto.server exited: %s", strings.TrimSpace(out.String()))
			server.missing = strings.Contains(out.String(), "No module named")
			return
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(endpoint + "/moto-api/"); err == nil {
			_ = resp.Body.Close()
			server.endpoint = endpoint
			return
		}
	}
	Stop()
	server.err = fmt.Errorf("moto.server did not answer within 30s: %s", out.String())
}
