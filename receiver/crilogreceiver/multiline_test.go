// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/tracker"
)

// TestKlogPresetLeavesJSONContainersAlone: the DaemonSet turns the klog preset on for every
// file. A JSON-logging container that is never idle must still get one record per entry, at
// once, and hold nothing pending (nothing for the checkpoints to rewrite).
func TestKlogPresetLeavesJSONContainersAlone(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.Multiline.Preset = PresetKlog
	cfg.Multiline.FlushTimeout = time.Hour // a busy container is never idle
	startReceiver(t, cfg, c, nil)
	p := newPodLog(t, root, "ns", "api", "app", 0)
	var want []string
	for i := range 500 {
		want = append(want, fmt.Sprintf(`{"level":"info","ts":%d,"msg":"served","path":"/v1/items/%d"}`, i, i))
		p.write("stdout", want[i], 0)
	}
	requireExactly(t, c, map[string][]string{key("api", "app", "stdout"): want})
}

// TestKlogPresetScopedByPath: multiline.include limits the preset to matching files; a file
// outside it is never recombined, whatever it writes.
func TestKlogPresetScopedByPath(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.Multiline.Preset = PresetKlog
	cfg.Multiline.FlushTimeout = 50 * time.Millisecond
	cfg.Multiline.Include = []string{filepath.Join(root, "kube-system_*", "*", "*.log")}
	startReceiver(t, cfg, c, nil)
	sys := newPodLog(t, root, "kube-system", "sched", "scheduler", 0)
	app := newPodLog(t, root, "ns", "web", "app", 0)
	lines := []string{`I0501 10:11:12.123456       1 server.go:12] "Config" value=<`, "\tline one", " >"}
	for _, l := range lines {
		sys.write("stderr", l, 0)
		app.write("stderr", l, 0)
	}
	requireExactly(t, c, map[string][]string{
		"kube-system/sched/scheduler/0/stderr": {strings.Join(lines, "\n")},
		key("web", "app", "stderr"):            lines,
	})
}

// TestMultilineRecordAtTheLimitIsContinued: a record that would pass max_log_size is emitted
// whole and continued in a record flagged otelcol_k8s.cri.continued; no byte is lost.
func TestMultilineRecordAtTheLimitIsContinued(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.Multiline.Preset = PresetKlog
	cfg.Multiline.FlushTimeout = 50 * time.Millisecond
	cfg.MaxLogSize = 1024
	startReceiver(t, cfg, c, nil)
	p := newPodLog(t, root, "ns", "dump", "app", 0)
	head := `I0501 10:11:12.123456       1 dump.go:1] "State"`
	p.write("stderr", head, 0)
	var cont []string
	for i := range 30 {
		cont = append(cont, fmt.Sprintf("\tfield %02d %s", i, strings.Repeat("v", 50)))
		p.write("stderr", cont[i], 0)
	}
	// 48 + 30*61 bytes: the record is split after the line that still fits 1024 bytes.
	fit := 0
	for n := len(head); n+1+len(cont[fit]) <= 1024; fit++ {
		n += 1 + len(cont[fit])
	}
	first := head + "\n" + strings.Join(cont[:fit], "\n")
	second := strings.Join(cont[fit:], "\n")
	requireExactly(t, c, map[string][]string{key("dump", "app", "stderr"): {first, second}})
	if _, ok := attrsOf(t, c, first)["otelcol_k8s.cri.continued"]; ok {
		t.Error("the first part is flagged continued")
	}
	if attrsOf(t, c, second)["otelcol_k8s.cri.continued"] != true {
		t.Error("the continuation is not flagged")
	}
}

// TestStacktracesPerFileAndStream: with the stacktraces preset, traces written to two
// containers' files and to both streams of one, line by line interleaved and some lines in
// partial pieces, arrive one record each on their own file and stream; the ordinary lines
// between them stay records of their own.
func TestStacktracesPerFileAndStream(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.Multiline.Preset = PresetStacktraces
	cfg.Multiline.FlushTimeout = 50 * time.Millisecond
	startReceiver(t, cfg, c, nil)
	api := newPodLog(t, root, "ns", "api", "app", 0)
	worker := newPodLog(t, root, "ns", "worker", "app", 0)
	java := []string{
		"2026-03-10 12:00:01.123 ERROR 1 --- [exec-3] c.e.OrderController : Order 4711 failed",
		"java.lang.IllegalStateException: order 4711 has no lines",
		"\tat com.example.shop.OrderService.place(OrderService.java:88) ~[classes/:na]",
		"Caused by: java.sql.SQLException: timeout",
		"\tat com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:181)",
		"\t... 52 common frames omitted",
		"2026-03-10 12:00:02.000  INFO 1 --- [main] c.e.Application : still serving",
	}
	python := []string{
		"INFO:app:request 17",
		"Traceback (most recent call last):",
		`  File "/app/worker.py", line 42, in process`,
		"    result = client.fetch(job.url)",
		"KeyError: 'url'",
		"INFO:app:request 18",
	}
	gopanic := []string{
		"2026/03/10 12:00:00 listening on :8080",
		"panic: runtime error: invalid memory address or nil pointer dereference",
		"",
		"goroutine 1 [running]:",
		"main.main()",
		"\t/app/main.go:12 +0x1d",
		"exit status 2",
	}
	for i := range max(len(java), len(python), len(gopanic)) {
		if i < len(java) {
			api.write("stderr", java[i], 16)
		}
		if i < len(python) {
			api.write("stdout", python[i], 0)
		}
		if i < len(gopanic) {
			worker.write("stderr", gopanic[i], 0)
		}
	}
	requireExactly(t, c, map[string][]string{
		key("api", "app", "stderr"):    {strings.Join(java[0:6], "\n"), java[6]},
		key("api", "app", "stdout"):    {python[0], strings.Join(python[1:5], "\n"), python[5]},
		key("worker", "app", "stderr"): {gopanic[0], strings.Join(gopanic[1:], "\n")},
	})
}

// TestStacktraceAcrossKill: a trace half read when the collector is killed (its held record
// and tentative blank line in the checkpoint) arrives whole, once, after the restart.
func TestStacktraceAcrossKill(t *testing.T) {
	root := t.TempDir()
	store := newMemStorage()
	cfg := testConfig(root)
	cfg.Storage = &storageID
	cfg.Multiline.Preset = PresetAuto
	cfg.Multiline.FlushTimeout = time.Hour // nothing leaves by the timeout
	first := &collector{}
	startReceiver(t, cfg, first, hostWith(store))
	p := newPodLog(t, root, "ns", "crash", "app", 0)
	lines := []string{
		"2026/03/10 12:00:00 listening on :8080",
		"panic: runtime error: index out of range [3] with length 3",
		"",
		"goroutine 1 [running]:",
		"main.main()",
		"\t/app/main.go:12 +0x1d",
		"exit status 2",
		`I0310 12:00:05.000000       1 main.go:1] "Restarted"`,
	}
	for _, l := range lines[:3] {
		p.write("stderr", l, 0)
	}
	info, err := p.f.Stat()
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		for k, v := range store.data {
			if s, err := tracker.UnmarshalState(v); err == nil && strings.HasPrefix(k, filePrefixKey) && s.Offset == info.Size() {
				return true
			}
		}
		return false
	}, 20*time.Second, 5*time.Millisecond)
	killed := store.copy()
	for _, l := range lines[3:] {
		p.write("stderr", l, 0)
	}
	want := map[string][]string{key("crash", "app", "stderr"): {lines[0], strings.Join(lines[1:7], "\n")}}
	requireExactly(t, first, want)

	// The held line was emitted before the kill (the panic line ended it); the trace, pending
	// then, comes from the checkpoint's state and the lines after it.
	second := &collector{}
	startReceiver(t, cfg, second, hostWith(killed))
	requireExactly(t, second, map[string][]string{key("crash", "app", "stderr"): want[key("crash", "app", "stderr")][1:]})
}
