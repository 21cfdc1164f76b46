package localcloudwatch_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// moto is a moto server process shared by the tests of this package.
var moto struct {
	once     sync.Once
	stop     func()
	endpoint string
	pid      int
	err      error // start failure
	missing  bool  // moto is not installed
}

func TestMain(m *testing.M) {
	code := m.Run()
	if moto.stop != nil {
		moto.stop()
	}
	os.Exit(code)
}

// motoEndpoint starts moto once (python3 -m moto.server on a free loopback port) and
// returns its endpoint after resetting its state. A missing moto skips the test,
// except with CI=true, where it fails.
func motoEndpoint(t testing.TB) string {
	t.Helper()
	moto.once.Do(startMoto)
	if moto.err != nil {
		if moto.missing && os.Getenv("CI") != "true" {
			t.Skipf("moto not available (set CI=true to make this a failure): %v", moto.err)
		}
		t.Fatalf("moto: %v", moto.err)
	}
	resp, err := http.Post(moto.endpoint+"/moto-api/reset", "application/json", nil)
	if err != nil {
		t.Fatalf("moto reset: %v", err)
	}
	resp.Body.Close()
	return moto.endpoint
}

func startMoto() {
	python, err := exec.LookPath("python3")
	if err != nil {
		moto.err, moto.missing = err, true
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		moto.err = err
		return
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(python, "-m", "moto.server", "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		moto.err = err
		return
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	moto.stop = func() { _ = cmd.Process.Kill(); <-exited }
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case <-exited:
			moto.err = fmt.Errorf("moto.server exited: %s", strings.TrimSpace(stderr.String()))
			moto.missing = strings.Contains(stderr.String(), "No module named")
			return
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(endpoint + "/moto-api/"); err == nil {
			resp.Body.Close()
			moto.endpoint = endpoint
			moto.pid = cmd.Process.Pid
			return
		}
	}
	moto.stop()
	moto.stop = nil
	moto.err = fmt.Errorf("moto.server did not answer within 30s: %s", stderr.String())
}
