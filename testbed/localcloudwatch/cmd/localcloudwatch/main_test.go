// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

func TestParseFlags(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-throttle-rate", "0.3", "-server-error-rate", "0.05", "-latency", "5ms", "-fault-ops", "PutLogEvents,CreateLogStream"}, ""},
		{[]string{"-throttle-rate", "1.5"}, "outside [0, 1]"},
		{[]string{"-fault-ops", "Nope"}, "unknown operation"},
		{[]string{"-down"}, "needs -control-addr"},
		{[]string{"extra"}, "unexpected arguments"},
	}
	for _, tc := range cases {
		o, err := parseFlags(tc.args, io.Discard)
		if tc.wantErr == "" {
			if err != nil || o.faults.ThrottleRate != 0.3 || len(o.faults.Operations) != 2 || o.faults.Latency != localcloudwatch.Duration(5*time.Millisecond) {
				t.Errorf("%v: %v %+v", tc.args, err, o)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.wantErr)
		}
	}
}

// TestRun starts the command, uses the control endpoint to take the API down and up,
// stops it with SIGTERM and reads the state dump.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	endpointFile := filepath.Join(dir, "endpoint")
	dump := filepath.Join(dir, "state.json")
	// A fixed free port for the control listener.
	control := freeAddr(t)
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run([]string{"-addr", "127.0.0.1:0", "-control-addr", control, "-endpoint-file", endpointFile, "-state-dump", dump, "-allow-unsigned"}, io.Discard, &stderr)
	}()
	var endpoint string
	for deadline := time.Now().Add(5 * time.Second); endpoint == ""; {
		if b, err := os.ReadFile(endpointFile); err == nil && len(b) > 0 {
			endpoint = strings.TrimSpace(string(b))
		} else if time.Now().After(deadline) {
			t.Fatalf("no endpoint; stderr: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	call := func(target, body string) int {
		req, _ := http.NewRequest(http.MethodPost, endpoint+"/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "Logs_20140328."+target)
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return -1
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if got := call("CreateLogGroup", `{"logGroupName":"g"}`); got != 200 {
		t.Fatalf("CreateLogGroup: %d", got)
	}
	post := func(body string) {
		resp, err := http.Post("http://"+control+"/local/faults", "application/json", strings.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("faults %s: %v %v", body, err, resp)
		}
		_ = resp.Body.Close()
	}
	post(`{"down":true}`)
	if got := call("CreateLogGroup", `{"logGroupName":"h"}`); got != -1 {
		t.Fatalf("API answered %d while down", got)
	}
	post(`{}`)
	if got := call("CreateLogGroup", `{"logGroupName":"h"}`); got != 200 {
		t.Fatalf("API after up: %d", got)
	}
	if resp, err := http.Get("http://" + control + "/"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("control serves the API: %v %v", err, resp)
	}

	_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not stop on SIGTERM")
	}
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	var sum localcloudwatch.Summary
	if err := json.Unmarshal(b, &sum); err != nil || len(sum.Groups) != 2 || sum.Stats.Requests["CreateLogGroup"] != 2 {
		t.Fatalf("dump %s: %v", b, err)
	}
}

func freeAddr(t *testing.T) string {
	srv := localcloudwatch.New(localcloudwatch.Config{})
	ep, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_ = srv.Close()
	return strings.TrimPrefix(ep, "http://")
}

func TestReport(t *testing.T) {
	srv := localcloudwatch.New(localcloudwatch.Config{AllowUnsigned: true})
	endpoint, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	call := func(target, body string) {
		req, _ := http.NewRequest(http.MethodPost, endpoint+"/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "Logs_20140328."+target)
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", target, err, resp)
		}
		_ = resp.Body.Close()
	}
	now := time.Now().UnixMilli()
	call("CreateLogGroup", `{"logGroupName":"/k8s/application","tags":{"team":"logs"}}`)
	call("PutRetentionPolicy", `{"logGroupName":"/k8s/application","retentionInDays":7}`)
	call("CreateLogStream", `{"logGroupName":"/k8s/application","logStreamName":"node-1.app"}`)
	call("PutLogEvents", fmt.Sprintf(`{"logGroupName":"/k8s/application","logStreamName":"node-1.app","logEvents":[{"timestamp":%d,"message":"first"},{"timestamp":%d,"message":"second"}]}`, now, now))
	var out bytes.Buffer
	if err := run([]string{"-report", endpoint, "-report-events", "1"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/k8s/application", "7 days", "team=logs", "PutLogEvents: 1 accepted, 2 events", "/k8s/application / node-1.app (last 1 of 2 events)", "second"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "first") {
		t.Errorf("report shows more than 1 event:\n%s", out.String())
	}
}

// TestRunRefusesBadCredentials: -credentials takes KEY=SECRET pairs only.
func TestRunRefusesBadCredentials(t *testing.T) {
	for _, v := range []string{"AKID", "AKID=", "=secret", "AKID=s,nope"} {
		if err := run([]string{"-addr", "127.0.0.1:0", "-credentials", v}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "not KEY=SECRET") {
			t.Errorf("-credentials %q: %v", v, err)
		}
	}
}
