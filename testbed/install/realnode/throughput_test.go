// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
)

// TestNodePathThroughput measures the node path on the real node: four Pods write 200,000
// lines of 250 bytes at 10,000 lines/s together (the kubelet rotating each Pod's log about
// every two seconds), and the node agent Pod, as the chart runs it, delivers them to the local
// server. It reports the agent process's CPU time per line and its resident memory, the
// figures testbed/BENCHMARKS.md records beside the simulated node's; nothing may be lost. The
// last line must be stored (by the server's clock) within flush_timeout and a few seconds of
// its writing (by the container runtime's), and seen by the test a moment later; the log line
// shows per second what was written, stored, read and queued.
func TestNodePathThroughput(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	const pods, rate, seconds = 4, 2500, 20
	perStream := rate / 2 * seconds
	var ws []loggen
	ps := loggenPods("throughput", pods, rate, perStream)
	for _, p := range ps {
		ws = append(ws, loggen{name: p.Name, streams: []string{"stdout", "stderr"}, lines: perStream})
	}
	pid := agentProcess(t)
	cpu0, _, err := harness.ProcUsage(pid)
	require.NoError(t, err)
	var peak harness.Memory
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // resident memory by kind, sampled while the agent works
		defer close(sampled)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if m, err := harness.ProcMemory(pid); err == nil {
				peak = peak.Max(m)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	began := time.Now()
	tel := sampleAgent(began,
		"otelcol_receiver_cri_log_lines_read", "otelcol_receiver_cri_log_read_lag", "otelcol_receiver_cri_log_rotations",
		"otelcol_receiver_cri_log_files_draining", "otelcol_receiver_cri_log_backpressure_waits",
		"otelcol_exporter_queue_size", "otelcol_exporter_cloudwatch_groups_events_sent", "otelcol_exporter_cloudwatch_groups_batches",
		"otelcol_exporter_cloudwatch_groups_streams_created", "otelcol_exporter_cloudwatch_groups_server_errors")
	runPods(t, e, ps, ws, 3*time.Minute)
	written := time.Since(began)
	a, _ := waitAccount(t, e, ws, 3*time.Minute)
	delivered := time.Since(began)
	tel.Stop()
	pass := time.Now()
	arr := arrivalsOf(t, e, ws, began) // one pass over every stored event, timed
	passTook := time.Since(pass)
	close(stop)
	<-sampled
	cpu1, hwm, err := harness.ProcUsage(pid)
	require.NoError(t, err)
	require.Equal(t, pid, agentProcess(t), "the agent restarted during the measurement")
	cpu := cpu1 - cpu0
	lines := float64(a.written)
	t.Logf("real node: %d lines (%d Pods, %d lines/s, %d rotated files left) written in %v, all delivered %v after the start; agent CPU %v = %.0f lines per CPU-second; agent memory peak RSS %.1f MiB (anon %.1f, file %.1f), VmHWM %.1f MiB; %s",
		a.written, pods, rate*pods, rotations(ws), written.Round(100*time.Millisecond), delivered.Round(100*time.Millisecond),
		cpu.Round(10*time.Millisecond), lines/cpu.Seconds(), mib(peak.Total()), mib(peak.Anon), mib(peak.File), mib(hwm), a)
	t.Logf("arrivals: %s\n  one pass over the %d stored events took %v\n%s", arr, e.srv.Summary().Stats.EventsAccepted, passTook.Round(10*time.Millisecond), tel)
	assert.Zero(t, a.missing, "lines lost")
	assert.Zero(t, a.duplicates, "lines repeated without any restart")
	// A line reaches the server within flush_timeout (a stream's partial batch waits that
	// long once the writes stop) and a few seconds; the test sees it a moment later.
	assert.LessOrEqual(t, arr.afterLastWrite(), flushTimeout+5*time.Second, "the last line stored this long after it was written")
	assert.LessOrEqual(t, delivered-written, flushTimeout+7*time.Second, "everything seen delivered this long after the last line was written")
}

// flushTimeout is the exporter's batch flush_timeout, which the chart leaves at its default.
const flushTimeout = 5 * time.Second

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// loggenPods are n loggen Pods named prefix-i writing count lines per stream at rate.
func loggenPods(prefix string, n, rate, count int) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, n)
	for i := range n {
		out = append(out, loggenPod(fmt.Sprintf("%s-%d", prefix, i), rate, lineSize, count))
	}
	return out
}
