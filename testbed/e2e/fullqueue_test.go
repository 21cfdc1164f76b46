// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

// TestKillNineWithFullQueueDuringOutage: CloudWatch Logs goes down while the node writes, the
// exporter's persistent queue (the shipped storage and settings, its size lowered to 4 MiB so
// that it fills in seconds) fills and cri_log pauses; the collector is then killed with SIGKILL
// twice, each time with the queue full, and restarted on the same state directory while the
// server is still down. Every restart must find the queue's items again (its size is not zero
// before the server is back), and once the server returns every line is delivered: none lost,
// duplicates allowed (a kill repeats what was in flight or not yet checkpointed).
func TestKillNineWithFullQueueDuringOutage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 21})
	e.metricsAddr = freeAddr(t)
	const queueBytes = 4 << 20
	e.queueSize = queueBytes
	n := steadyNode()
	n.Seed = 21
	n.Phases = []nodesim.Phase{{Duration: 30 * time.Second, LinesPerSecond: 2000}}
	// No rotation: while cri_log pauses, the log files hold the rest; retention removing unread
	// files would be a loss this test is not about.
	n.RotateBytes, n.ShortPodsPerSecond = 1<<40, 0
	run(t, e, scenario{node: n, allowDuplicates: true, during: func(ctx context.Context, e *env) {
		set(e, localcloudwatch.Faults{Down: true})
		defer set(e, localcloudwatch.Faults{})
		for kill := 1; kill <= 2; kill++ {
			if !e.waitQueue(ctx, "full", func(size, capacity float64) bool { return capacity > 0 && size >= capacity*0.9 }) {
				return
			}
			e.col.Kill()
			e.start()
			e.waitReady()
			if !e.waitQueue(ctx, "recovered after the kill", func(size, _ float64) bool { return size > 0 }) {
				return
			}
			t.Logf("kill %d: the restarted collector found its queue again", kill)
		}
	}})
	if e.starts != 3 {
		t.Errorf("collector started %d times, want 3 (two kills)", e.starts)
	}
}

// TestUpgradeFromFileStorageQueue: the agent of an earlier version (the shipped configuration
// with the exporter's queue in file_storage, as shipped before) queues the node's lines during
// an outage and is stopped as a rollout stops it; the shipped agent (queue in queue_storage,
// importing from file_storage's directory) starts on the same hostPath while CloudWatch Logs is
// still down, takes the old queue over (file_storage's file renamed, the queue not empty) and,
// once the server is back, every line is delivered exactly once.
func TestUpgradeFromFileStorageQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 22})
	e.metricsAddr = freeAddr(t)
	e.queueStorage = "file_storage"
	n := steadyNode()
	n.Seed = 22
	n.Phases = []nodesim.Phase{{Duration: 15 * time.Second, LinesPerSecond: 1000}}
	n.RotateBytes, n.ShortPodsPerSecond = 1<<40, 0
	old := filepath.Join(e.dir, "state", "exporter_cloudwatch_groups__logs")
	run(t, e, scenario{node: n, during: func(ctx context.Context, e *env) {
		set(e, localcloudwatch.Faults{Down: true})
		defer set(e, localcloudwatch.Faults{})
		if !e.waitQueue(ctx, "holding 1 MiB in file_storage", func(size, _ float64) bool { return size >= 1<<20 }) {
			return
		}
		if err := e.col.Stop(30 * time.Second); err != nil {
			t.Errorf("stopping the old agent: %v", err)
		}
		if _, err := os.Stat(old); err != nil {
			t.Errorf("the old agent left no file_storage queue: %v", err)
			return
		}
		e.queueStorage = ""
		e.start()
		e.waitReady()
		if !e.waitQueue(ctx, "taken over by queue_storage", func(size, _ float64) bool { return size > 0 }) {
			return
		}
		if _, err := os.Stat(old + ".imported"); err != nil {
			t.Errorf("file_storage's queue file was not renamed: %v", err)
		}
	}})
}

// waitQueue waits until the exporter's queue size and capacity (its own metrics, in the
// sizer's unit) satisfy ok, scraping them every 100 ms for up to a minute; it reports a test
// error and returns false when they never do.
func (e *env) waitQueue(ctx context.Context, what string, ok func(size, capacity float64) bool) bool {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	var size, capacity float64
	for time.Now().Before(deadline) {
		m := scrapeQuiet("http://" + e.metricsAddr + "/metrics")
		size, capacity = m["otelcol_exporter_queue_size"], m["otelcol_exporter_queue_capacity"]
		if ok(size, capacity) {
			e.t.Logf("exporter queue %s: %.0f of %.0f", what, size, capacity)
			return true
		}
		select {
		case <-ctx.Done():
			e.t.Errorf("the node stopped before the exporter queue was %s (%.0f of %.0f)", what, size, capacity)
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	e.t.Errorf("the exporter queue was never %s: %.0f of %.0f", what, size, capacity)
	return false
}

// scrapeQuiet is scrape for a collector that may be between a kill and its restart: a failed
// read returns no metrics instead of failing the test.
func scrapeQuiet(url string) map[string]float64 {
	out, _ := fetchMetrics(url)
	return out
}
