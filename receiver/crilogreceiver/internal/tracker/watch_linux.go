//go:build linux

package tracker

import (
	"os"

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
}

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
			if wd, err := unix.InotifyAddWatch(w.fd, d, dirEvents); err == nil {
				w.watched[d] = wd
			}
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
