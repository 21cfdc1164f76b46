// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
)

func TestInterleavedPartialsAndAttributes(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.IncludeFilePath = true
	_, tel := startReceiver(t, cfg, c, nil)
	p := newPodLog(t, root, "ns", "web", "app", 0)
	// stdout and stderr entries cut into pieces that interleave line by line.
	var b strings.Builder
	clock := p.clock
	out := criLines(&clock, "stdout", "out-one  with spaces  ", 5)
	errs := criLines(&clock, "stderr", "err-one", 2)
	ol, el := strings.SplitAfter(out, "\n"), strings.SplitAfter(errs, "\n")
	for i := 0; i < max(len(ol), len(el)); i++ {
		if i < len(ol) {
			b.WriteString(ol[i])
		}
		if i < len(el) {
			b.WriteString(el[i])
		}
	}
	// A character cut between two pieces, extra tags, an empty entry, a bad line, bad UTF-8.
	b.WriteString("2024-05-01T10:00:01.000000001Z stdout P caf\xc3\n")
	b.WriteString("2024-05-01T10:00:01.000000002Z stdout F \xa9 au lait\n")
	b.WriteString("2024-05-01T10:00:02+02:00 stderr F:origin=crio tagged\n")
	b.WriteString("2024-05-01T10:00:03Z stdout F \n")
	b.WriteString("this is not CRI\n")
	b.WriteString("2024-05-01T10:00:04Z stderr F bad \xff byte\n")
	_, err := p.f.WriteString(b.String())
	require.NoError(t, err)
	requireExactly(t, c, map[string][]string{
		key("web", "app", "stdout"): {"out-one  with spaces  ", "café au lait", ""},
		key("web", "app", "stderr"): {"err-one", "tagged", "bad \uFFFD byte"},
		"ns/web/app/0/":             {"this is not CRI"},
	})
	require.Equal(t, map[string]any{"log.iostream": "stderr", "otelcol_k8s.cri.tags": "origin=crio", "log.file.path": p.path}, attrsOf(t, c, "tagged"))
	require.Equal(t, map[string]any{"otelcol_k8s.cri.parse_error": true, "log.file.path": p.path}, attrsOf(t, c, "this is not CRI"))
	require.Equal(t, true, attrsOf(t, c, "bad \uFFFD byte")["otelcol_k8s.cri.invalid_utf8"])
	for _, g := range c.snapshot() {
		if g.body == "tagged" {
			require.Equal(t, time.Date(2024, 5, 1, 8, 0, 2, 0, time.UTC), g.time.UTC())
		}
	}
	require.Eventually(t, func() bool {
		return metricSum(t, tel, "otelcol_receiver_cri_log_parse_failures") == 1 &&
			metricSum(t, tel, "otelcol_receiver_cri_log_partial_joins") == 3 &&
			metricSum(t, tel, "otelcol_receiver_cri_log_files_open") == 1
	}, 5*time.Second, 10*time.Millisecond)
}

func TestResourceAttributes(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	startReceiver(t, testConfig(root), c, nil)
	p := newPodLog(t, root, "kube-system", "dns", "coredns", 3)
	p.write("stdout", "hello", 0)
	waitCount(t, c, 1)
	require.Equal(t, map[string]any{
		"k8s.namespace.name": "kube-system", "k8s.pod.name": "dns", "k8s.pod.uid": "dns-uid",
		"k8s.container.name": "coredns", "k8s.container.restart_count": int64(3),
	}, c.snapshot()[0].res)
}

func TestDockerJSONFile(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	startReceiver(t, testConfig(root), c, nil)
	p := newPodLog(t, root, "ns", "old", "app", 0)
	_, err := p.f.WriteString(`{"log":"first part ","stream":"stdout","time":"2024-05-01T10:00:00Z"}` + "\n" +
		`{"log":"err \u003cline\u003e\n","stream":"stderr","time":"2024-05-01T10:00:00.5Z"}` + "\n" +
		`{"log":"second part\n","stream":"stdout","time":"2024-05-01T10:00:01Z"}` + "\n")
	require.NoError(t, err)
	requireExactly(t, c, map[string][]string{
		key("old", "app", "stdout"): {"first part second part"},
		key("old", "app", "stderr"): {"err <line>"},
	})
}

func TestRotationByRenameWithGzipWhileWriting(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	startReceiver(t, testConfig(root), c, nil)
	p := newPodLog(t, root, "ns", "rot", "app", 0)
	const n = 3000
	want := map[string][]string{}
	rotations := 0
	for i := 0; i < n; i++ {
		stream := "stdout"
		if i%3 == 0 {
			stream = "stderr"
		}
		body := fmt.Sprintf("%s entry %05d %s", stream, i, strings.Repeat("x", i%97))
		piece := 0
		if i%10 == 0 {
			piece = 16 // some entries are split into partial lines
		}
		p.write(stream, body, piece)
		want[key("rot", "app", stream)] = append(want[key("rot", "app", stream)], body)
		if i%400 == 399 {
			// kubelet: rename, the runtime keeps writing to the old descriptor briefly, then
			// reopens; later the rotated file is compressed and removed.
			rotated := fmt.Sprintf("%s.20240501-10%04d", p.path, rotations)
			require.NoError(t, os.Rename(p.path, rotated))
			for k := 0; k < 3; k++ {
				i++
				body := fmt.Sprintf("stdout entry %05d after rename", i)
				p.write("stdout", body, 0)
				want[key("rot", "app", "stdout")] = append(want[key("rot", "app", "stdout")], body)
			}
			old := p.f
			p.reopen()
			_ = old.Close()
			rotations++
			go gzipAndRemove(t, rotated, 30*time.Millisecond)
		}
		if i%50 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	requireExactly(t, c, want)
	files, _ := filepath.Glob(filepath.Join(p.dir, "*.gz"))
	require.NotEmpty(t, files, "rotated files were compressed")
}

func gzipAndRemove(t *testing.T, path string, after time.Duration) {
	time.Sleep(after)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("gzip: %v", err)
		return
	}
	f, err := os.Create(path + ".gz")
	if err != nil {
		t.Errorf("gzip: %v", err)
		return
	}
	zw := gzip.NewWriter(f)
	_, _ = zw.Write(data)
	_ = zw.Close()
	_ = f.Close()
	_ = os.Remove(path)
}

func TestCopyTruncate(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	_, tel := startReceiver(t, testConfig(root), c, nil)
	p := newPodLog(t, root, "ns", "ct", "app", 0)
	var want []string
	written := 0
	write := func(n int, tag string) {
		for i := 0; i < n; i++ {
			body := fmt.Sprintf("%s line %04d", tag, written)
			written++
			p.write("stdout", body, 0)
			want = append(want, body)
		}
	}
	write(100, "before")
	waitCount(t, c, len(want))
	// logrotate copytruncate: copy, then truncate in place; the writer (O_APPEND) continues.
	data, err := os.ReadFile(p.path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p.path+".1", data, 0o644))
	require.NoError(t, os.Truncate(p.path, 0))
	write(20, "after")
	waitCount(t, c, len(want))
	// Truncated and rewritten past the old offset before the receiver looks: only the
	// fingerprint can tell.
	data, _ = os.ReadFile(p.path)
	require.NoError(t, os.WriteFile(p.path+".2", data, 0o644))
	require.NoError(t, os.Truncate(p.path, 0))
	write(300, "rewritten")
	requireExactly(t, c, map[string][]string{key("ct", "app", "stdout"): want})
	require.Equal(t, int64(2), metricSum(t, tel, "otelcol_receiver_cri_log_copytruncations"))
}

func TestLargeEntry(t *testing.T) {
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte('a' + i%26)
	}
	copy(big[1<<20-1:], "é") // a two-byte character across the 1 MiB limit
	for _, tc := range []struct {
		name    string
		maxSize int
		want    string
		flagged bool
	}{
		{"kept whole", 4 << 20, string(big), false},
		{"truncated at 1 MiB", 1 << 20, string(big[:1<<20-1]), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			c := &collector{}
			cfg := testConfig(root)
			cfg.MaxLogSize = tc.maxSize
			_, tel := startReceiver(t, cfg, c, nil)
			p := newPodLog(t, root, "ns", "big", "app", 0)
			p.write("stdout", "small before", 0)
			p.write("stdout", string(big), 16<<10) // containerd splits at 16 KiB
			p.write("stderr", "small after", 0)
			requireExactly(t, c, map[string][]string{
				key("big", "app", "stdout"): {"small before", tc.want},
				key("big", "app", "stderr"): {"small after"},
			})
			_, flagged := attrsOf(t, c, tc.want)["otelcol_k8s.cri.truncated"]
			require.Equal(t, tc.flagged, flagged)
			if tc.flagged {
				require.Equal(t, int64(len(big)-len(tc.want)), metricSum(t, tel, "otelcol_receiver_cri_log_truncated_bytes"))
			}
		})
	}
}

func TestDeletedPodDirectoryIsReadToTheEnd(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.PollInterval = 300 * time.Millisecond // make sure the deletion happens before the next look
	_, tel := startReceiver(t, cfg, c, nil)
	p := newPodLog(t, root, "ns", "gone", "app", 0)
	p.write("stdout", "first", 0)
	waitCount(t, c, 1)
	want := []string{"first"}
	for i := 0; i < 2000; i++ {
		body := fmt.Sprintf("late line %d", i)
		p.write("stdout", body, 0)
		want = append(want, body)
	}
	require.NoError(t, os.RemoveAll(filepath.Dir(p.dir)))
	requireExactly(t, c, map[string][]string{key("gone", "app", "stdout"): want})
	// Once drained, the file is let go.
	require.Eventually(t, func() bool {
		return metricSum(t, tel, "otelcol_receiver_cri_log_files_open") == 0
	}, 5*time.Second, 10*time.Millisecond)
}

func TestBackpressureRefusingConsumer(t *testing.T) {
	root := t.TempDir()
	c := &collector{refuse: 25}
	_, tel := startReceiver(t, testConfig(root), c, nil)
	want := map[string][]string{}
	for f := 0; f < 3; f++ {
		p := newPodLog(t, root, "ns", fmt.Sprintf("bp%d", f), "app", 0)
		for i := 0; i < 500; i++ {
			body := fmt.Sprintf("f%d line %d", f, i)
			p.write("stdout", body, 0)
			want[key(fmt.Sprintf("bp%d", f), "app", "stdout")] = append(want[key(fmt.Sprintf("bp%d", f), "app", "stdout")], body)
		}
	}
	requireExactly(t, c, want)
	require.Equal(t, int64(25), metricSum(t, tel, "otelcol_receiver_cri_log_backpressure_waits"))
}

func TestBlockedConsumer(t *testing.T) {
	root := t.TempDir()
	gate := make(chan struct{})
	c := &collector{gate: gate}
	startReceiver(t, testConfig(root), c, nil)
	p := newPodLog(t, root, "ns", "blk", "app", 0)
	var want []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 5000; i++ {
			p.write("stderr", fmt.Sprintf("while blocked %d", i), 0)
		}
	}()
	for i := 0; i < 5000; i++ {
		want = append(want, fmt.Sprintf("while blocked %d", i))
	}
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, 0, c.count())
	close(gate)
	requireExactly(t, c, map[string][]string{key("blk", "app", "stderr"): want})
}

func TestFlushTimeoutAndStartAtEnd(t *testing.T) {
	root := t.TempDir()
	old := newPodLog(t, root, "ns", "pre", "app", 0)
	old.write("stdout", "written before the first start", 0)
	c := &collector{}
	cfg := testConfig(root)
	cfg.StartAt = StartAtEnd
	cfg.FlushTimeout = 100 * time.Millisecond
	_, tel := startReceiver(t, cfg, c, nil)
	waitFilesOpen(t, tel, 1)
	old.write("stdout", "after start", 0)
	// A file that appears later is read from its beginning even with start_at: end.
	late := newPodLog(t, root, "ns", "late", "app", 0)
	late.write("stdout", "late first", 0)
	_, err := late.f.WriteString("2024-05-01T10:00:00Z stderr P never finished\n")
	require.NoError(t, err)
	requireExactly(t, c, map[string][]string{
		key("pre", "app", "stdout"):  {"after start"},
		key("late", "app", "stdout"): {"late first"},
		key("late", "app", "stderr"): {"never finished"},
	})
	require.Equal(t, true, attrsOf(t, c, "never finished")["otelcol_k8s.cri.flushed"])
}

func TestKlogMultiline(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.Multiline.Preset = PresetKlog
	cfg.Multiline.FlushTimeout = 50 * time.Millisecond
	startReceiver(t, cfg, c, nil)
	p := newPodLog(t, root, "ns", "klog", "kubelet", 0)
	p.write("stderr", `I0501 10:11:12.123456       1 server.go:12] "Config" value=<`, 0)
	p.write("stderr", `	line one`, 0)
	p.write("stderr", `	line two`, 8)
	p.write("stderr", ` >`, 0)
	p.write("stderr", `E0501 10:11:13.000001       1 server.go:40] "Failed"`, 0)
	requireExactly(t, c, map[string][]string{
		key("klog", "kubelet", "stderr"): {
			"I0501 10:11:12.123456       1 server.go:12] \"Config\" value=<\n\tline one\n\tline two\n >",
			`E0501 10:11:13.000001       1 server.go:40] "Failed"`,
		},
	})
}

// TestRestartAfterKill runs a receiver on several busy files, freezes it at an arbitrary moment
// (its storage content at that instant is what a kill -9 leaves), and starts a new receiver on
// a copy of that storage. Nothing may be lost; duplicates are bounded by one batch per file.
func TestRestartAfterKill(t *testing.T) {
	root := t.TempDir()
	store := newMemStorage()
	first := &collector{}
	cfg := testConfig(root)
	cfg.Storage = &storageID
	cfg.MaxBytesPerPoll = 4096 // many small batches, so the kill lands mid-stream
	cfg.CheckpointInterval = 100 * time.Millisecond
	a, _ := startReceiver(t, cfg, first, hostWith(store))
	const files, lines = 4, 3000
	want := map[string][]string{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for f := 0; f < files; f++ {
		p := newPodLog(t, root, "ns", fmt.Sprintf("k%d", f), "app", 0)
		wg.Add(1)
		go func(f int, p *podLog) {
			defer wg.Done()
			for i := 0; i < lines; i++ {
				stream := []string{"stdout", "stderr"}[i%2]
				body := fmt.Sprintf("k%d %s %d", f, stream, i)
				piece := 0
				if i%7 == 0 {
					piece = 3
				}
				p.write(stream, body, piece)
				mu.Lock()
				want[key(fmt.Sprintf("k%d", f), "app", stream)] = append(want[key(fmt.Sprintf("k%d", f), "app", stream)], body)
				mu.Unlock()
				if i%100 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}(f, p)
	}
	waitCount(t, first, files*lines/3)
	first.freeze()
	killed := store.copy()
	wg.Wait()
	_ = a.Shutdown(t.Context())

	second := &collector{}
	startReceiver(t, cfg, second, hostWith(killed))
	total := files * lines
	delivered := first.snapshot()
	require.Eventually(t, func() bool { return len(delivered)+second.count() >= total }, 20*time.Second, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	// Per key: what the first receiver delivered, then what the second delivered, must be the
	// expected sequence with at most one repeated run where they meet.
	gotSecond := second.bodies()
	gotFirst := map[string][]string{}
	acceptedAt := map[string][]time.Time{}
	for _, g := range delivered {
		gotFirst[g.key] = append(gotFirst[g.key], g.body)
		acceptedAt[g.key] = append(acceptedAt[g.key], g.accepted)
	}
	dups := 0
	for k, w := range want {
		a, b := gotFirst[k], gotSecond[k]
		require.Equal(t, w[:len(a)], a, "%s: first receiver out of order", k)
		// b must start at or before len(a) and run to the end.
		start := len(w) - len(b)
		require.GreaterOrEqual(t, len(a), start, "%s: lost %d records between the receivers", k, start-len(a))
		require.Equal(t, w[start:], b, "%s: second receiver", k)
		// The documented bound: the records accepted within one checkpoint_interval, plus one
		// batch per file (MaxBytesPerPoll bytes, of lines of at least 40 bytes).
		bound := maxInWindow(acceptedAt[k], cfg.CheckpointInterval) + cfg.MaxBytesPerPoll/40
		require.LessOrEqual(t, len(a)-start, bound, "%s: more repeated than the documented bound", k)
		dups += len(a) - start
	}
	t.Logf("restart after kill: %d of %d records delivered twice (one unacknowledged batch per file at most)", dups, total)
}

// TestRestartRotatedWhileDown stops a receiver gracefully (file_storage-like persistence on
// shutdown), rotates the file while it is down, and checks that the next receiver drains the
// rotated file from its checkpoint and reads the new file from its start.
func TestRestartRotatedWhileDown(t *testing.T) {
	root := t.TempDir()
	storeDir := t.TempDir()
	cfg := testConfig(root)
	cfg.Storage = &storageID
	first := &collector{}
	a, _ := startReceiver(t, cfg, first, hostWith(storagetest.NewFileBackedStorageExtension("test_storage", storeDir)))
	p := newPodLog(t, root, "ns", "down", "app", 0)
	p.write("stdout", "one", 0)
	p.write("stdout", "two", 5)
	_, err := p.f.WriteString("2024-05-01T10:00:00Z stderr P pending across the restart, ")
	require.NoError(t, err)
	_, err = p.f.WriteString("\n")
	require.NoError(t, err)
	waitCount(t, first, 2)
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, a.Shutdown(t.Context()))

	p.write("stderr", "finished", 0)
	p.write("stdout", "three (old file, written while down)", 0)
	require.NoError(t, os.Rename(p.path, p.path+".20240501-100000"))
	p.reopen()
	p.write("stdout", "four (new file)", 0)

	second := &collector{}
	startReceiver(t, cfg, second, hostWith(storagetest.NewFileBackedStorageExtension("test_storage", storeDir)))
	requireExactly(t, second, map[string][]string{
		key("down", "app", "stdout"): {"three (old file, written while down)", "four (new file)"},
		key("down", "app", "stderr"): {"pending across the restart, finished"},
	})
	require.Equal(t, []string{"one", "two"}, first.bodies()[key("down", "app", "stdout")])
}

func TestLineStartPatternMultiline(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.Multiline.LineStartPattern = `^\d{4}-\d{2}-\d{2} `
	cfg.Multiline.FlushTimeout = 50 * time.Millisecond
	startReceiver(t, cfg, c, nil)
	p := newPodLog(t, root, "ns", "java", "app", 0)
	p.write("stdout", "2024-05-01 10:00:00 ERROR boom", 0)
	p.write("stdout", "java.lang.IllegalStateException: x", 0)
	p.write("stdout", "\tat com.example.Main.run(Main.java:12)", 0)
	p.write("stdout", "2024-05-01 10:00:01 INFO next", 0)
	requireExactly(t, c, map[string][]string{
		key("java", "app", "stdout"): {
			"2024-05-01 10:00:00 ERROR boom\njava.lang.IllegalStateException: x\n\tat com.example.Main.run(Main.java:12)",
			"2024-05-01 10:00:01 INFO next",
		},
	})
}

func TestContainersSymlinkLayout(t *testing.T) {
	root := t.TempDir()
	const id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	p := newPodLog(t, filepath.Join(root, "pods"), "ns", "web", "app", 0)
	links := filepath.Join(root, "containers")
	require.NoError(t, os.MkdirAll(links, 0o755))
	require.NoError(t, os.Symlink(p.path, filepath.Join(links, "web_ns_app-"+id+".log")))
	c := &collector{}
	cfg := testConfig(root)
	// Both layouts matched: the file must be read once, through whichever path came first.
	cfg.Include = []string{filepath.Join(links, "*.log")}
	startReceiver(t, cfg, c, nil)
	p.write("stderr", "through the link", 0)
	waitCount(t, c, 1)
	require.Equal(t, map[string]any{
		"k8s.namespace.name": "ns", "k8s.pod.name": "web", "k8s.container.name": "app",
		"container.id": id,
	}, c.snapshot()[0].res)
}

func TestSameFileThroughTwoPatternsIsReadOnce(t *testing.T) {
	root := t.TempDir()
	p := newPodLog(t, filepath.Join(root, "pods"), "ns", "web", "app", 0)
	links := filepath.Join(root, "containers")
	require.NoError(t, os.MkdirAll(links, 0o755))
	require.NoError(t, os.Symlink(p.path, filepath.Join(links, "web_ns_app-0123456789abcdef.log")))
	c := &collector{}
	cfg := testConfig(root)
	cfg.Include = []string{filepath.Join(root, "pods", "*", "*", "*.log"), filepath.Join(links, "*.log")}
	startReceiver(t, cfg, c, nil)
	for i := 0; i < 100; i++ {
		p.write("stdout", fmt.Sprintf("once %d", i), 0)
	}
	waitCount(t, c, 100)
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, 100, c.count())
}

// TestRestartRotatedAndCompressedWhileDown: while the collector is down the file is rotated
// and the rotated file compressed and removed. The next receiver finds the checkpoint's file
// inside the .gz by its fingerprint and reads the rest of it from there.
// TestRestartRotatedAndCompressedWhileDown: the collector is stopped across two kubelet
// rotations in kubelet's real order (the newest rotation stays uncompressed, the one before is
// compressed at the next rotation), on a read-only root filesystem (TMPDIR unwritable). Every line
// is read once, in order: the checkpointed file through a decompressing stream, the file rotated
// in between although it was never opened, then the current file.
func TestRestartRotatedAndCompressedWhileDown(t *testing.T) {
	root := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(root, "read-only-root"))
	store := newMemStorage()
	cfg := testConfig(root)
	cfg.Storage = &storageID
	first := &collector{}
	a, _ := startReceiver(t, cfg, first, hostWith(store))
	p := newPodLog(t, root, "ns", "gz", "app", 0)
	for i := 0; i < 50; i++ {
		p.write("stdout", fmt.Sprintf("before %d", i), 0)
	}
	waitCount(t, first, 50)
	require.NoError(t, a.Shutdown(t.Context()))

	var want []string
	write := func(format string, n int) {
		for i := 0; i < n; i++ {
			want = append(want, fmt.Sprintf(format, i))
			p.write("stdout", want[len(want)-1], 0)
		}
	}
	write("while down %d", 30)
	r1 := p.rotate("20240501-100000")
	write("between rotations %d", 20)
	gzipAndRemove(t, r1, 0)
	p.rotate("20240501-100100")
	write("new file %d", 5)

	second := &collector{}
	startReceiver(t, cfg, second, hostWith(store))
	requireExactly(t, second, map[string][]string{key("gz", "app", "stdout"): want})
}

// TestIdleFilesFreeTheirSlots: 1,040 container files on a node with max_concurrent_files 32.
// Files idle at their end are closed with their state kept, so every file gets a slot in turn,
// late-sorting namespaces included (before, finished containers held the slots until their pods
// were deleted and the rest waited forever); a closed file that grows is opened again and read
// from where it stopped; after a restart nothing is read again (the closed files' checkpoints
// are kept).
func TestIdleFilesFreeTheirSlots(t *testing.T) {
	root := t.TempDir()
	store := newMemStorage()
	c := &collector{}
	cfg := testConfig(root)
	cfg.Storage = &storageID
	cfg.MaxConcurrentFiles = 32
	a, tel := startReceiver(t, cfg, c, hostWith(store))
	const files = 1040
	path := func(i int) string {
		return filepath.Join(root, fmt.Sprintf("ns%04d_p_p-uid", i), "app", "0.log")
	}
	appendLine := func(i int, body string) {
		f, err := os.OpenFile(path(i), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		require.NoError(t, err)
		_, err = fmt.Fprintf(f, "2024-05-01T10:00:00.000000000Z stdout F %s\n", body)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	want := map[string][]string{}
	k := func(i int) string { return fmt.Sprintf("ns%04d/p/app/0/stdout", i) }
	for i := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(path(i)), 0o755))
		appendLine(i, fmt.Sprintf("first %d", i))
		want[k(i)] = []string{fmt.Sprintf("first %d", i)}
	}
	require.Eventually(t, func() bool { return c.count() >= files }, 60*time.Second, 10*time.Millisecond,
		"received %d of %d", c.count(), files)
	require.LessOrEqual(t, metricSum(t, tel, "otelcol_receiver_cri_log_files_open"), int64(32))
	// Closed files grow: the earliest and the latest sorting ones.
	for _, i := range []int{0, 1, files - 2, files - 1} {
		appendLine(i, fmt.Sprintf("second %d", i))
		want[k(i)] = append(want[k(i)], fmt.Sprintf("second %d", i))
	}
	requireExactly(t, c, want)
	require.NoError(t, a.Shutdown(t.Context()))

	again := &collector{}
	startReceiver(t, cfg, again, hostWith(store))
	appendLine(files-1, "after the restart")
	requireExactly(t, again, map[string][]string{k(files - 1): {"after the restart"}})
}

type permanentRefuser struct{ collector }

func (p *permanentRefuser) ConsumeLogs(_ context.Context, _ plog.Logs) error {
	p.mu.Lock()
	p.refused++
	p.mu.Unlock()
	return consumererror.NewPermanent(errors.New("rejected for good"))
}

func TestPermanentErrorIsDroppedAndCounted(t *testing.T) {
	root := t.TempDir()
	c := &permanentRefuser{}
	_, tel := startReceiver(t, testConfig(root), c, nil)
	p := newPodLog(t, root, "ns", "perm", "app", 0)
	for i := 0; i < 10; i++ {
		p.write("stdout", fmt.Sprintf("rejected %d", i), 0)
	}
	require.Eventually(t, func() bool {
		return metricSum(t, tel, "otelcol_receiver_cri_log_records_dropped") == 10
	}, 5*time.Second, 10*time.Millisecond)
}

// failingStorage fails every write until healed.
type failingStorage struct {
	*memStorage
	failing atomic.Bool
}

func (s *failingStorage) GetClient(_ context.Context, _ component.Kind, _ component.ID, _ string) (storage.Client, error) {
	return &failingClient{memClient: memClient{s: s.memStorage}, failing: &s.failing}, nil
}

type failingClient struct {
	memClient
	failing *atomic.Bool
}

func (c *failingClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		if op.Type != storage.Get && c.failing.Load() {
			return errors.New("disk full")
		}
	}
	return c.memClient.Batch(ctx, ops...)
}

func TestCheckpointWriteFailureIsRetried(t *testing.T) {
	root := t.TempDir()
	store := &failingStorage{memStorage: newMemStorage()}
	store.failing.Store(true)
	cfg := testConfig(root)
	cfg.Storage = &storageID
	c := &collector{}
	a, tel := startReceiver(t, cfg, c, hostWith(store))
	p := newPodLog(t, root, "ns", "ckpt", "app", 0)
	p.write("stdout", "one", 0)
	waitCount(t, c, 1)
	require.Eventually(t, func() bool {
		return metricSum(t, tel, "otelcol_receiver_cri_log_checkpoint_errors") > 0 &&
			metricSum(t, tel, "otelcol_receiver_cri_log_checkpoint_lag") > 0
	}, 5*time.Second, 10*time.Millisecond)
	store.failing.Store(false)
	require.Eventually(t, func() bool {
		return metricSum(t, tel, "otelcol_receiver_cri_log_checkpoint_lag") == 0
	}, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, a.Shutdown(t.Context()))
	// The saved checkpoint is used: nothing is read twice.
	p.write("stdout", "two", 0)
	second := &collector{}
	startReceiver(t, cfg, second, hostWith(store.memStorage))
	requireExactly(t, second, map[string][]string{key("ckpt", "app", "stdout"): {"two"}})
}

func TestStartAtEndOnlyAtFirstStartWithStorage(t *testing.T) {
	root := t.TempDir()
	store := newMemStorage()
	p := newPodLog(t, root, "ns", "se", "app", 0)
	p.write("stdout", "before the first start", 0)
	cfg := testConfig(root)
	cfg.StartAt = StartAtEnd
	cfg.Storage = &storageID
	first := &collector{}
	a, tel := startReceiver(t, cfg, first, hostWith(store))
	waitFilesOpen(t, tel, 1)
	p.write("stdout", "after the first start", 0)
	requireExactly(t, first, map[string][]string{key("se", "app", "stdout"): {"after the first start"}})
	require.NoError(t, a.Shutdown(t.Context()))
	p.write("stdout", "while down", 0)
	late := newPodLog(t, root, "ns", "late", "app", 0)
	late.write("stdout", "new pod while down", 0)
	second := &collector{}
	startReceiver(t, cfg, second, hostWith(store))
	requireExactly(t, second, map[string][]string{
		key("se", "app", "stdout"):   {"while down"},
		key("late", "app", "stdout"): {"new pod while down"},
	})
}

// TestCopyTruncateWhileWriting truncates the file in place while a writer keeps appending, as
// logrotate's copytruncate does. Lines written between a copy and the truncation are gone for
// every reader; what must hold is that nothing is corrupted (no line read from a stale offset
// into new content), duplicated or reordered. The truncations happen at fixed points of the
// writer's sequence, in its goroutine, while the receiver reads concurrently: the last lines are
// always written after the last truncation, so the test waits for a line that must arrive
// (truncating from another goroutine could cut the last line away, which made it flaky).
func TestCopyTruncateWhileWriting(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	startReceiver(t, testConfig(root), c, nil)
	p := newPodLog(t, root, "ns", "ctw", "app", 0)
	const n, every = 20000, 1000
	truncations := 0
	for i := 0; i < n; i++ {
		p.write("stdout", fmt.Sprintf("line %05d %s", i, strings.Repeat("y", i%50)), 0)
		if i%every == every-1 && i < n-every {
			require.NoError(t, os.Truncate(p.path, 0))
			truncations++
		}
		if i%200 == 0 {
			time.Sleep(2 * time.Millisecond) // pacing: the receiver reads while lines are written
		}
	}
	last := fmt.Sprintf("line %05d %s", n-1, strings.Repeat("y", (n-1)%50))
	require.Eventually(t, func() bool {
		for _, g := range c.snapshot() {
			if g.body == last {
				return true
			}
		}
		return false
	}, 20*time.Second, 5*time.Millisecond)
	prev := -1
	for _, g := range c.snapshot() {
		var i int
		_, err := fmt.Sscanf(g.body, "line %05d", &i)
		require.NoError(t, err, "corrupted record %q", g.body)
		require.Equal(t, fmt.Sprintf("line %05d %s", i, strings.Repeat("y", i%50)), g.body)
		require.Greater(t, i, prev, "duplicate or reordered record %q", g.body)
		prev = i
	}
	t.Logf("%d truncations while writing: %d of %d lines delivered", truncations, c.count(), n)
}

// TestShortLivedPods creates pods whose log directories exist for only 400 ms, less than the
// default discovery interval: directory events must get every one of them read.
func TestShortLivedPods(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := createDefaultConfig().(*Config)
	cfg.Include = []string{filepath.Join(root, "*", "*", "*.log")}
	cfg.StartAt = StartAtBeginning
	startReceiver(t, cfg, c, nil)
	time.Sleep(100 * time.Millisecond) // the first discovery has run
	want := map[string][]string{}
	for i := 0; i < 5; i++ {
		pod := fmt.Sprintf("brief%d", i)
		p := newPodLog(t, root, "ns", pod, "app", 0)
		for j := 0; j < 20; j++ {
			body := fmt.Sprintf("%s line %d", pod, j)
			p.write("stdout", body, 0)
			want[key(pod, "app", "stdout")] = append(want[key(pod, "app", "stdout")], body)
		}
		time.Sleep(400 * time.Millisecond)
		require.NoError(t, os.RemoveAll(filepath.Dir(p.dir)))
	}
	requireExactly(t, c, want)
}

// TestNoisyPodDoesNotStarveOthers gives one file a large backlog; a line written to another
// file must arrive long before the backlog is read, because each file gets at most
// max_bytes_per_poll per turn.
func TestNoisyPodDoesNotStarveOthers(t *testing.T) {
	root := t.TempDir()
	noisy := newPodLog(t, root, "ns", "noisy", "app", 0)
	const backlog = 100000
	var b strings.Builder
	clock := noisy.clock
	for i := 0; i < backlog; i++ {
		b.WriteString(criLines(&clock, "stdout", fmt.Sprintf("noisy %06d %s", i, strings.Repeat("n", 100)), 0))
	}
	_, err := noisy.f.WriteString(b.String())
	require.NoError(t, err)
	quiet := newPodLog(t, root, "ns", "quiet", "app", 0)
	c := &collector{}
	cfg := testConfig(root)
	cfg.MaxBytesPerPoll = 64 << 10
	startReceiver(t, cfg, c, nil)
	quiet.write("stdout", "quiet line", 0)
	require.Eventually(t, func() bool { return len(c.bodies()[key("quiet", "app", "stdout")]) == 1 },
		20*time.Second, time.Millisecond)
	noisyBefore := len(c.bodies()[key("noisy", "app", "stdout")])
	require.Less(t, noisyBefore, backlog/2, "the quiet file waited for most of the noisy backlog")
	waitCount(t, c, backlog+1)
	t.Logf("quiet line arrived after %d of %d noisy lines", noisyBefore, backlog)
}

// maxInWindow is the most times within any window of length d (times in ascending order).
func maxInWindow(times []time.Time, d time.Duration) int {
	best, lo := 0, 0
	for hi := range times {
		for times[hi].Sub(times[lo]) > d {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}
