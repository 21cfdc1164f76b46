//go:build linux

package tracker

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Watcher signals Discover when an entry is created, renamed or removed in a directory that can
// hold matched files. It uses inotify without IN_MODIFY, so busy files cost nothing here. It is
// an accelerator only: when it cannot watch (limits, unsupported filesystem) polling still finds
// everything.
type Watcher struct {
	f       *os.File
	fd      int
	include []string
	watched map[string]int
	// Discover receives a signal (coalesced) after directory changes.
	Discover chan struct{}
	// Errors counts directories that could not be watched; LastError tells the latest.
	Errors  atomic.Int64
	errMu   sync.Mutex
	lastErr error
}

// LastError returns the latest watch failure (nil if none).
func (w *Watcher) LastError() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.lastErr
}

// addWatch is inotify_add_watch; tests replace it to simulate exhausted watch limits.
var addWatch = unix.InotifyAddWatch

const dirEvents = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE | unix.IN_ONLYDIR

// NewWatcher starts watching the directories that can hold files matched by include.
func NewWatcher(include []string) (*Watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	w := &Watcher{
		f: os.NewFile(uintptr(fd), "inotify"), fd: fd, include: include, //nolint:gosec // a valid descriptor: InotifyInit1 succeeded
		watched: map[string]int{}, Discover: make(chan struct{}, 1),
	}
	w.Refresh()
	go w.loop()
	return w, nil
}

// Refresh adds watches for new directories and forgets those that are gone. It returns the
// number of watched directories.
func (w *Watcher) Refresh() int {
	now := watchDirs(w.include)
	for d := range now {
		if _, ok := w.watched[d]; !ok {
			wd, err := addWatch(w.fd, d, dirEvents)
			if errors.Is(err, unix.ENOENT) {
				continue // removed since the listing (a pod deleted): nothing to watch
			}
			if err != nil {
				// ENOSPC: fs.inotify.max_user_watches reached. Polling still finds its files.
				w.errMu.Lock()
				w.lastErr = fmt.Errorf("watching %s: %w", d, err)
				w.errMu.Unlock()
				w.Errors.Add(1)
				continue
			}
			w.watched[d] = wd
		}
	}
	for d, wd := range w.watched {
		if !now[d] {
			_, _ = unix.InotifyRmWatch(w.fd, uint32(wd)) //nolint:gosec // watch descriptors are small
			delete(w.watched, d)
		}
	}
	return len(w.watched)
}

func (w *Watcher) loop() {
	buf := make([]byte, 64<<10)
	for {
		// Any event (including a queue overflow) means "look again"; their details do not
		// matter because discovery compares the whole file set.
		if _, err := w.f.Read(buf); err != nil {
			return
		}
		select {
		case w.Discover <- struct{}{}:
		default:
		}
	}
}

// Close stops watching.
func (w *Watcher) Close() error { return w.f.Close() }
