//go:build !linux

package tracker

import "errors"

// Watcher is not available on this platform; discovery relies on polling.
type Watcher struct {
	Discover chan struct{}
}

// NewWatcher reports that watching is not supported.
func NewWatcher([]string) (*Watcher, error) {
	return nil, errors.New("tracker: directory watching is only supported on Linux")
}

// Refresh does nothing.
func (*Watcher) Refresh() int { return 0 }

// Close does nothing.
func (*Watcher) Close() error { return nil }
