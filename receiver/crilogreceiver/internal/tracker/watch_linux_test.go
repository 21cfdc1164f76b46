// SPDX-License-Identifier: Apache-2.0

//go:build linux

package tracker

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestWatchFileWakesOnceOnTheNextWrite: a watched quiet file signals Wake at its first write,
// through any name (the watch is on the file, not its path), and only once; an unwatched file
// signals nothing.
func TestWatchFileWakesOnceOnTheNextWrite(t *testing.T) {
	root := t.TempDir()
	w, err := NewWatcher([]string{filepath.Join(root, "*", "*", "*.log")})
	require(t, err)
	t.Cleanup(func() { _ = w.Close() })
	open := func(name string) (*os.File, *os.File) {
		p := filepath.Join(root, name)
		wf, err := os.Create(p)
		require(t, err)
		t.Cleanup(func() { _ = wf.Close() })
		rf, err := os.Open(p)
		require(t, err)
		t.Cleanup(func() { _ = rf.Close() })
		return wf, rf
	}
	quietW, quietR := open("quiet.log")
	otherW, otherR := open("other.log")
	wd, err := w.WatchFile(quietR)
	require(t, err)
	otherWD, err := w.WatchFile(otherR)
	require(t, err)
	w.UnwatchFile(otherWD)

	_, err = otherW.WriteString("x\n")
	require(t, err)
	// Renamed before the write, as a rotation would: still the same file.
	require(t, os.Rename(filepath.Join(root, "quiet.log"), filepath.Join(root, "quiet.log.1")))
	_, err = quietW.WriteString("x\n")
	require(t, err)
	select {
	case <-w.Wake:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake after writing to the watched file")
	}
	wds, all := w.TakeWoken()
	if all || len(wds) != 1 || wds[0] != wd {
		t.Fatalf("woken %v (all %v), want only %d", wds, all, wd)
	}
	_, err = quietW.WriteString("y\n")
	require(t, err)
	select {
	case <-w.Wake:
		t.Fatalf("a second wake: the watch fires once (woken %v)", func() []int { wds, _ := w.TakeWoken(); return wds }())
	case <-time.After(200 * time.Millisecond):
	}
}

// TestWatchFileFailureIsCounted: a quiet file whose watch cannot be placed (ENOSPC) is counted
// with the directory failures and named in the last error; the caller then polls it.
func TestWatchFileFailureIsCounted(t *testing.T) {
	root := t.TempDir()
	w, err := NewWatcher([]string{filepath.Join(root, "*", "*", "*.log")})
	require(t, err)
	t.Cleanup(func() { _ = w.Close() })
	f, err := os.Create(filepath.Join(root, "quiet.log"))
	require(t, err)
	t.Cleanup(func() { _ = f.Close() })
	real := addWatch
	t.Cleanup(func() { addWatch = real })
	addWatch = func(int, string, uint32) (int, error) { return -1, unix.ENOSPC }
	if _, err := w.WatchFile(f); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("WatchFile: %v, want ENOSPC", err)
	}
	if n := w.Errors.Load(); n != 1 {
		t.Fatalf("watch errors %d, want 1", n)
	}
	if err := w.LastError(); !errors.Is(err, unix.ENOSPC) || !strings.Contains(err.Error(), "quiet.log") {
		t.Fatalf("last error %v, want ENOSPC naming the file", err)
	}
}
