//go:build linux

package tracker

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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
