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
