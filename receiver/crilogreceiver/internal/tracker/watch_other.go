//go:build !linux

package tracker

import (
	"errors"
	"os"
	"sync/atomic"
)

// Watcher is not available on this platform; discovery relies on polling.
type Watcher struct {
	Discover chan struct{}
	Written  chan struct{}
	Errors   atomic.Int64
}

// LastError returns nil.
func (*Watcher) LastError() error { return nil }

// NewWatcher reports that watching is not supported.
func NewWatcher([]string) (*Watcher, error) {
	return nil, errors.New("tracker: directory watching is only supported on Linux")
}

// WatchFile cannot watch: the caller keeps polling the file.
func (*Watcher) WatchFile(*os.File) (int, bool) { return 0, false }

// UnwatchFile does nothing.
func (*Watcher) UnwatchFile(int) {}

// Modified reports nothing.
func (*Watcher) Modified() ([]int, bool) { return nil, false }

// Expand lists nothing: the tracker's own Match does.
func (*Watcher) Expand() []string { return nil }

// Refresh does nothing.
func (*Watcher) Refresh() int { return 0 }

// Close does nothing.
func (*Watcher) Close() error { return nil }
