//go:build !linux

package tracker

import (
	"errors"
	"sync/atomic"
)

// Watcher is not available on this platform; discovery relies on polling.
type Watcher struct {
	Discover chan struct{}
	Errors   atomic.Int64
}

// LastError returns nil.
func (*Watcher) LastError() error { return nil }

// NewWatcher reports that watching is not supported.
func NewWatcher([]string) (*Watcher, error) {
	return nil, errors.New("tracker: directory watching is only supported on Linux")
}

// Refresh does nothing.
func (*Watcher) Refresh() int { return 0 }

// Close does nothing.
func (*Watcher) Close() error { return nil }
