//go:build linux

package tracker

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A node whose log directory appears only after the receiver started is still seen through
// directory events, not only at the next periodic discovery.
func TestWatcherSeesAMissingPrefixAppear(t *testing.T) {
	root := t.TempDir()
	prefix := filepath.Join(root, "var", "log", "pods")
	w, err := NewWatcher([]string{filepath.Join(prefix, "*", "*", "*.log")})
	require(t, err)
	t.Cleanup(func() { _ = w.Close() })
	if n := w.Refresh(); n != 1 {
		t.Fatalf("watching %d directories, want the one existing ancestor", n)
	}

	// The way a node's runtime creates it: the whole path, then a pod, a container, a file;
	// the receiver refreshes its watches at every signal, as it does before each discovery.
	steps := []string{prefix, filepath.Join(prefix, "ns_pod_uid"), filepath.Join(prefix, "ns_pod_uid", "c")}
	for _, dir := range steps {
		require(t, os.MkdirAll(dir, 0o755))
		select {
		case <-w.Discover:
		case <-time.After(5 * time.Second):
			t.Fatalf("no directory event after creating %s", dir)
		}
		w.Refresh()
	}
	require(t, os.WriteFile(filepath.Join(steps[2], "0.log"), []byte("x\n"), 0o644))
	select {
	case <-w.Discover:
	case <-time.After(5 * time.Second):
		t.Fatal("no directory event for the new log file")
	}
}

// TestWatchFailuresAreCounted: when a directory cannot be watched (fs.inotify.max_user_watches
// reached: ENOSPC) the failure is counted and kept for the log; a directory removed since the
// listing is not a failure.
func TestWatchFailuresAreCounted(t *testing.T) {
	root := t.TempDir()
	require(t, os.MkdirAll(filepath.Join(root, "ns_a_u", "c"), 0o755))
	require(t, os.MkdirAll(filepath.Join(root, "ns_b_u", "c"), 0o755))
	real := addWatch
	t.Cleanup(func() { addWatch = real })
	addWatch = func(fd int, path string, mask uint32) (int, error) {
		switch filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path) {
		case "ns_a_u/c":
			return -1, unix.ENOSPC
		case "ns_b_u/c":
			return -1, unix.ENOENT
		}
		return real(fd, path, mask)
	}
	w, err := NewWatcher([]string{filepath.Join(root, "*", "*", "*.log")})
	require(t, err)
	t.Cleanup(func() { _ = w.Close() })
	if n := w.Errors.Load(); n != 1 {
		t.Fatalf("watch errors %d, want 1", n)
	}
	if err := w.LastError(); err == nil || !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("last error %v", err)
	}
}

func TestWatchFileReportsWritesWhereverTheFileIs(t *testing.T) {
	root := t.TempDir()
	w, err := NewWatcher([]string{filepath.Join(root, "*", "*", "*.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	path := filepath.Join(root, "ns_p_u", "c", "0.log")
	writeFile(t, path, line(1), false)
	r, err := os.Open(path)
	require(t, err)
	t.Cleanup(func() { _ = r.Close() })
	writer, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require(t, err)
	t.Cleanup(func() { _ = writer.Close() })
	wd, ok := w.WatchFile(r)
	if !ok {
		t.Fatalf("WatchFile: %v", w.LastError())
	}
	written := func(what string) {
		t.Helper()
		select {
		case <-w.Written:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no signal", what)
		}
		wds, all := w.Modified()
		if all || len(wds) == 0 || wds[0] != wd {
			t.Fatalf("%s: Modified = %v, %v; want [%d ...]", what, wds, all, wd)
		}
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case <-w.Written:
			wds, all := w.Modified()
			t.Fatalf("%s: signaled, Modified = %v, %v", what, wds, all)
		case <-time.After(200 * time.Millisecond):
		}
	}
	quiet("before any write")
	if _, err := writer.WriteString(line(2)); err != nil {
		t.Fatal(err)
	}
	written("a write")
	// Rotated: the watch follows the file the reader holds, not the path.
	if err := os.Rename(path, path+".20240501-100000"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, line(3), false) // the new file at the path
	quiet("a write to the new file at the path")
	if _, err := writer.WriteString(line(4)); err != nil {
		t.Fatal(err)
	}
	written("a write to the rotated file")
	w.UnwatchFile(wd)
	if _, err := writer.WriteString(line(5)); err != nil {
		t.Fatal(err)
	}
	quiet("a write after UnwatchFile")
}

// A file that cannot be watched (watch limit reached) is reported so (its reader keeps polling
// it) and counted like a directory that cannot be.
func TestWatchFileFailureIsCounted(t *testing.T) {
	root := t.TempDir()
	w, err := NewWatcher([]string{filepath.Join(root, "*", "*", "*.log")})
	require(t, err)
	t.Cleanup(func() { _ = w.Close() })
	path := filepath.Join(root, "ns_p_u", "c", "0.log")
	writeFile(t, path, line(1), false)
	f, err := os.Open(path)
	require(t, err)
	t.Cleanup(func() { _ = f.Close() })
	real := addWatch
	t.Cleanup(func() { addWatch = real })
	addWatch = func(int, string, uint32) (int, error) { return -1, unix.ENOSPC }
	if wd, ok := w.WatchFile(f); ok || wd != 0 {
		t.Fatalf("WatchFile = %d, %v", wd, ok)
	}
	if n := w.Errors.Load(); n != 1 {
		t.Fatalf("watch errors %d, want 1", n)
	}
	if err := w.LastError(); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("last error %v", err)
	}
}
