// SPDX-License-Identifier: Apache-2.0

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
	Wake     chan struct{}
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

// Watch does nothing.
func (*Watcher) Watch(map[string]bool) int { return 0 }

// Close does nothing.
func (*Watcher) Close() error { return nil }

// WatchFile reports that watching is not supported.
func (*Watcher) WatchFile(*os.File) (int, error) {
	return 0, errors.New("tracker: file watching is only supported on Linux")
}

// UnwatchFile does nothing.
func (*Watcher) UnwatchFile(int) {}

// TakeWoken returns nothing.
func (*Watcher) TakeWoken() ([]int, bool) { return nil, false }
