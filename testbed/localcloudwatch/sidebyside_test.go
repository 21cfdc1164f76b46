// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/otelcol-k8s/otelcol-k8s/internal/awsauth/mototest"
)

// processCPU returns the user+system CPU time a process has used, from /proc.
func processCPU(tb testing.TB, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatalf("read process CPU: %v", err)
	}
	// Fields after the parenthesised command name; utime and stime are the 12th and 13th.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// startLocalProcess builds and runs the localcloudwatch command, so that its CPU time
// is measured apart from the client's, like moto's.
func startLocalProcess(b *testing.B) (endpoint string, pid int) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "localcloudwatch")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/localcloudwatch").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	epFile := filepath.Join(dir, "endpoint")
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-endpoint-file", epFile, "-aws-quotas=false")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ep, err := os.ReadFile(epFile); err == nil && len(ep) > 0 {
			return strings.TrimSpace(string(ep)), cmd.Process.Pid
		}
	}
	b.Fatal("localcloudwatch did not start")
	return "", 0
}

// BenchmarkServersSideBySide sends the same PutLogEvents batches (1,000 events of 200
// bytes) through the SDK client to localcloudwatch and to moto, each running as its own
// process, and reports each server's CPU time per batch and events per server CPU-second.
//
//	go test -run '^$' -bench ServersSideBySide -benchtime 40x .
func BenchmarkServersSideBySide(b *testing.B) {
	servers := []struct {
		name  string
		start func(b *testing.B) (string, int)
	}{
		{"localcloudwatch", startLocalProcess},
		{"moto", func(b *testing.B) (string, int) {
			ep := mototest.Endpoint(b)
			return ep, mototest.Pid()
		}},
	}
	const perBatch = 1000
	for _, sv := range servers {
		b.Run(sv.name, func(b *testing.B) {
			endpoint, pid := sv.start(b)
			c := newClient(endpoint, aws.NopRetryer{})
			ctx := b.Context()
			if _, err := c.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("bench")}); err != nil {
				b.Fatal(err)
			}
			if _, err := c.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String("bench"), LogStreamName: aws.String("s")}); err != nil {
				b.Fatal(err)
			}
			batch := batchOfSize(perBatch, 200, time.Now().UnixMilli())
			cpu0 := processCPU(b, pid)
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("bench"), LogStreamName: aws.String("s"), LogEvents: batch}); err != nil {
					b.Fatal(err)
				}
			}
			cpu := processCPU(b, pid) - cpu0
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "server-cpu-ms/batch")
			if cpu > 0 {
				b.ReportMetric(float64(b.N*perBatch)/cpu.Seconds(), "events/server-cpu-s")
			}
		})
	}
}
