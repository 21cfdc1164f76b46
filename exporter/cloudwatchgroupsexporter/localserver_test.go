// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The local CloudWatch Logs server (testbed/localcloudwatch) runs as its own process, the
// command testbed/localcloudwatch/cmd/localcloudwatch: this module's go.mod then names no
// test-only module, and a collector build that imports the exporter resolves it by version
// alone. The tests configure the server with its flags and its POST /local/faults endpoint and
// read what it stored from GET /local/summary and /local/events.
//
// The binary is OTELCOL_K8S_LOCALCW_BIN (`make test-modules` builds bin/localcloudwatch);
// without it the tests build the command from the repository around this module. Outside the
// repository (a consumer running `go test all`) they skip, except under CI=true.
const envLocalBin = "OTELCOL_K8S_LOCALCW_BIN"

// localConfig is what the tests set of the server (localcloudwatch.Config's fields).
type localConfig struct {
	Seed          uint64
	Faults        localFaults
	CreationDelay time.Duration
	// Credentials, when set, are the access keys whose SigV4 signatures the server verifies;
	// empty: only the header's shape is checked. startLocal defaults it to the tests' key.
	Credentials map[string]string
	// Control serves the /local/ endpoints on a second address too, which stays up while the
	// API is down (the down fault); the tests' calls then go there.
	Control bool
}

// localFaults is localcloudwatch.Faults as its JSON (durations in nanoseconds, which the
// server accepts).
type localFaults struct {
	ThrottleRate    float64       `json:"throttleRate,omitempty"`
	ServerErrorRate float64       `json:"serverErrorRate,omitempty"`
	Down            bool          `json:"down,omitempty"`
	ErrorRate       float64       `json:"errorRate,omitempty"`
	ErrorCode       string        `json:"errorCode,omitempty"`
	Latency         time.Duration `json:"latency,omitempty"`
	LatencyJitter   time.Duration `json:"latencyJitter,omitempty"`
	Operations      []string      `json:"operations,omitempty"`
}

// localGroup, localStream, localEvent and localStats are the server's JSON (GroupInfo,
// StreamInfo, Event, Stats), the fields the tests read.
type localGroup struct {
	Name          string            `json:"name"`
	RetentionDays int32             `json:"retentionInDays"`
	KMSKeyID      string            `json:"kmsKeyId"`
	Class         string            `json:"logGroupClass"`
	Tags          map[string]string `json:"tags"`
	Events        int64             `json:"events"`
	StreamList    []localStream     `json:"streamList"`
}

type localStream struct {
	Name   string `json:"name"`
	Events int64  `json:"events"`
}

type localEvent struct {
	Timestamp int64  `json:"timestamp"`
	Message   string `json:"message"`
}

type localStats struct {
	Requests             map[string]int64 `json:"requests"`
	Throttles            int64            `json:"throttles"`
	QuotaThrottles       int64            `json:"quotaThrottles"`
	InjectedThrottles    int64            `json:"injectedThrottles"`
	InjectedServerErrors int64            `json:"injectedServerErrors"`
	InjectedErrors       int64            `json:"injectedErrors"`
	EventsAccepted       int64            `json:"eventsAccepted"`
}

// localServer is a running server process; its methods report failures on the test.
type localServer struct {
	t        *testing.T
	endpoint string
	// control is the address of the /local/ endpoints when not the API's (localConfig.Control).
	control string
}

var localBin struct {
	once sync.Once
	path string
	dir  string // a folder this package made for the binary, removed by TestMain
	err  error
	skip string
}

// localServerBinary returns the server command's path, building it once per test binary when
// OTELCOL_K8S_LOCALCW_BIN is not set.
func localServerBinary(t *testing.T) string {
	t.Helper()
	localBin.once.Do(func() {
		if p := os.Getenv(envLocalBin); p != "" {
			localBin.path = p
			return
		}
		src := findLocalServerSource()
		if src == "" {
			localBin.skip = "the local CloudWatch Logs server is not available: set " + envLocalBin + " (make test-modules does)"
			return
		}
		dir, err := os.MkdirTemp("", "localcloudwatch-bin-") //nolint:usetesting // one binary for all the package's tests; TestMain removes it
		if err != nil {
			localBin.err = err
			return
		}
		localBin.dir = dir
		localBin.path = filepath.Join(dir, "localcloudwatch")
		cmd := exec.Command("go", "build", "-o", localBin.path, "./cmd/localcloudwatch")
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			localBin.err = fmt.Errorf("go build the local server: %w\n%s", err, out)
		}
	})
	switch {
	case localBin.err != nil:
		t.Fatal(localBin.err)
	case localBin.skip != "" && os.Getenv("CI") == "true":
		t.Fatal(localBin.skip)
	case localBin.skip != "":
		t.Skip(localBin.skip)
	}
	return localBin.path
}

// findLocalServerSource returns testbed/localcloudwatch of the repository this module is in.
func findLocalServerSource() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		src := filepath.Join(dir, "testbed", "localcloudwatch")
		if _, err := os.Stat(filepath.Join(src, "cmd", "localcloudwatch", "main.go")); err == nil {
			return src
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func removeLocalServerBinary() {
	if localBin.dir != "" {
		_ = os.RemoveAll(localBin.dir)
	}
}

// startLocal runs a server with cfg until the test ends. Unless cfg says otherwise it verifies
// every request's signature with the tests' key (the exporter serializes PutLogEvents itself).
func startLocal(t *testing.T, cfg localConfig) *backend {
	t.Helper()
	if cfg.Credentials == nil {
		cfg.Credentials = map[string]string{"AKIDTEST": "secret"}
	}
	args := []string{"-addr", "127.0.0.1:0", "-seed", strconv.FormatUint(cfg.Seed, 10), "-creation-delay", cfg.CreationDelay.String()}
	var keys []string
	for k, v := range cfg.Credentials {
		keys = append(keys, k+"="+v)
	}
	if len(keys) > 0 {
		args = append(args, "-credentials", strings.Join(keys, ","))
	}
	if cfg.Control {
		args = append(args, "-control-addr", "127.0.0.1:0")
	}
	cmd := exec.Command(localServerBinary(t), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var logMu sync.Mutex
	var log bytes.Buffer
	ready := make(chan string, 1)
	controlReady := make(chan string, 1)
	go func() {
		// The server announces its endpoint on stderr; the rest of its log is kept for failures.
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			log.WriteString(line + "\n")
			logMu.Unlock()
			if rest, ok := strings.CutPrefix(line, "localcloudwatch: CloudWatch Logs API on "); ok {
				ready <- strings.Fields(rest)[0]
			}
			if rest, ok := strings.CutPrefix(line, "localcloudwatch: control endpoints on "); ok {
				controlReady <- strings.TrimSuffix(strings.Fields(rest)[0], "/local/")
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	serverLog := func() string { logMu.Lock(); defer logMu.Unlock(); return log.String() }
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("local CloudWatch Logs server log:\n%s", serverLog())
		}
	})
	var endpoint string
	select {
	case endpoint = <-ready:
	case <-exited:
		t.Fatalf("the local CloudWatch Logs server exited at start:\n%s", serverLog())
	case <-time.After(time.Minute):
		t.Fatalf("the local CloudWatch Logs server did not start in a minute:\n%s", serverLog())
	}
	s := &localServer{t: t, endpoint: endpoint}
	if cfg.Control {
		select {
		case s.control = <-controlReady:
		case <-exited:
			t.Fatalf("the local CloudWatch Logs server exited at start:\n%s", serverLog())
		case <-time.After(time.Minute):
			t.Fatalf("the local CloudWatch Logs server announced no control endpoint in a minute:\n%s", serverLog())
		}
	}
	if fj, _ := json.Marshal(cfg.Faults); string(fj) != "{}" {
		if err := s.call(http.MethodPost, "/local/faults", fj, nil); err != nil {
			t.Fatal(err)
		}
	}
	return &backend{name: "local", endpoint: endpoint, local: s}
}

// call sends a request to a /local/ endpoint and decodes the JSON answer into out (when not nil).
func (s *localServer) call(method, path string, body []byte, out any) error {
	base := s.endpoint
	if s.control != "" {
		base = s.control
	}
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

func (s *localServer) summary() (groups []localGroup, stats localStats) {
	var sum struct {
		Groups []localGroup `json:"groups"`
		Stats  localStats   `json:"stats"`
	}
	if err := s.call(http.MethodGet, "/local/summary", nil, &sum); err != nil {
		s.t.Error(err)
	}
	return sum.Groups, sum.Stats
}

// Stats returns the server's counters.
func (s *localServer) Stats() localStats {
	_, st := s.summary()
	return st
}

// Groups returns every log group with its streams.
func (s *localServer) Groups() []localGroup {
	g, _ := s.summary()
	return g
}

// Group returns the named log group.
func (s *localServer) Group(name string) (localGroup, bool) {
	for _, g := range s.Groups() {
		if g.Name == name {
			return g, true
		}
	}
	return localGroup{}, false
}

// Streams returns the streams of a group.
func (s *localServer) Streams(group string) ([]localStream, error) {
	g, ok := s.Group(group)
	if !ok {
		return nil, fmt.Errorf("no log group %s", group)
	}
	return g.StreamList, nil
}

// Events returns every stored event of a stream, oldest first.
func (s *localServer) Events(group, stream string) ([]localEvent, error) {
	var events []localEvent
	q := url.Values{"group": {group}, "stream": {stream}, "limit": {"0"}}
	err := s.call(http.MethodGet, "/local/events?"+q.Encode(), nil, &events)
	return events, err
}
