// SPDX-License-Identifier: Apache-2.0

//go:build linux

package tracker

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Watcher signals Discover when an entry is created, renamed or removed in a directory that can
// hold matched files. Directories are watched without IN_MODIFY, so busy files cost nothing
// here. Quiet files can be watched one at a time (WatchFile): their first write signals Wake.
// It is an accelerator only: when it cannot watch (limits, unsupported filesystem) polling
// still finds everything.
type Watcher struct {
	f       *os.File
	fd      int
	include []string
	watched map[string]int
	// Discover receives a signal (coalesced) after directory changes.
	Discover chan struct{}
	// Wake receives a signal (coalesced) when a file watched with WatchFile was written to;
	// TakeWoken tells which.
	Wake chan struct{}

	fileMu   sync.Mutex
	files    map[int]bool // watch descriptors of quiet files
	woken    []int
	overflow bool
	// Errors counts directories, and quiet files, that could not be watched; LastError tells
	// the latest.
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

// fail counts a watch that could not be placed and keeps err as the latest failure.
func (w *Watcher) fail(err error) {
	w.errMu.Lock()
	w.lastErr = err
	w.errMu.Unlock()
	w.Errors.Add(1)
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
		Wake: make(chan struct{}, 1), files: map[int]bool{},
	}
	w.Refresh()
	go w.loop()
	return w, nil
}

// Refresh walks the include patterns and watches the directories found (see Watch). It returns
// the number of watched directories.
func (w *Watcher) Refresh() int {
	dirs := map[string]bool{}
	for _, inc := range w.include {
		expand(inc, dirs)
	}
	w.Watch(dirs)
	return len(w.watched)
}

// Watch adds watches for the directories of now not watched yet and forgets those no longer in
// now. It returns the number of watches added.
func (w *Watcher) Watch(now map[string]bool) (added int) {
	for d := range now {
		if _, ok := w.watched[d]; !ok {
			wd, err := addWatch(w.fd, d, dirEvents)
			if errors.Is(err, unix.ENOENT) {
				continue // removed since the listing (a pod deleted): nothing to watch
			}
			if err != nil {
				// ENOSPC: fs.inotify.max_user_watches reached. Polling still finds its files.
				w.fail(fmt.Errorf("watching %s: %w", d, err))
				continue
			}
			w.watched[d] = wd
			added++
		}
	}
	for d, wd := range w.watched {
		if !now[d] {
			_, _ = unix.InotifyRmWatch(w.fd, uint32(wd)) //nolint:gosec // watch descriptors are small
			delete(w.watched, d)
		}
	}
	return added
}

// fileEvents is what a quiet file's watch waits for: its first write (a truncation is one too).
// IN_ONESHOT removes the watch with that event, so a busy file costs nothing here.
const fileEvents = unix.IN_MODIFY | unix.IN_ONESHOT

// WatchFile watches the open file f (through its descriptor, so the watch is on the file itself,
// whatever its name) until it is next written to, which signals Wake. It returns the watch
// descriptor, for TakeWoken and UnwatchFile.
func (w *Watcher) WatchFile(f *os.File) (int, error) {
	w.fileMu.Lock()
	defer w.fileMu.Unlock()
	// Under fileMu: an event of the new watch is classified only after it is recorded.
	wd, err := addWatch(w.fd, fmt.Sprintf("/proc/self/fd/%d", f.Fd()), fileEvents)
	if err != nil {
		// ENOSPC: fs.inotify.max_user_watches reached. The caller polls the file instead.
		w.fail(fmt.Errorf("watching quiet file %s: %w", f.Name(), err))
		return 0, err
	}
	w.files[wd] = true
	return wd, nil
}

// UnwatchFile removes the watch wd of WatchFile, if it has not fired yet.
func (w *Watcher) UnwatchFile(wd int) {
	w.fileMu.Lock()
	defer w.fileMu.Unlock()
	if w.files[wd] {
		delete(w.files, wd)
		_, _ = unix.InotifyRmWatch(w.fd, uint32(wd)) //nolint:gosec // watch descriptors are small
	}
}

// TakeWoken returns the watches of files written to since the last call (each watch fires
// once). all reports that events were lost (the kernel's queue overflowed): every watched file
// must be looked at, and its watch is forgotten.
func (w *Watcher) TakeWoken() (wds []int, all bool) {
	w.fileMu.Lock()
	defer w.fileMu.Unlock()
	wds, all = w.woken, w.overflow
	w.woken, w.overflow = nil, false
	if all {
		for wd := range w.files {
			_, _ = unix.InotifyRmWatch(w.fd, uint32(wd)) //nolint:gosec // watch descriptors are small
		}
		clear(w.files)
	}
	return wds, all
}

func (w *Watcher) loop() {
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		discover, wake := w.classify(buf[:n])
		if discover {
			signal(w.Discover)
		}
		if wake {
			signal(w.Wake)
		}
	}
}

// classify sorts a read of events into directory changes (discovery compares the whole file
// set, so their details do not matter) and writes to watched quiet files. A queue overflow is
// both.
func (w *Watcher) classify(b []byte) (discover, wake bool) {
	w.fileMu.Lock()
	defer w.fileMu.Unlock()
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0])) //nolint:gosec // the kernel writes whole, aligned events
		b = b[min(len(b), unix.SizeofInotifyEvent+int(ev.Len)):]
		wd := int(ev.Wd)
		switch {
		case ev.Mask&unix.IN_Q_OVERFLOW != 0:
			w.overflow = true
			discover, wake = true, true
		case w.files[wd]:
			// The write, or IN_IGNORED when the file's watch went away another way (the file
			// deleted, its filesystem unmounted): either way the file must be looked at.
			delete(w.files, wd)
			w.woken = append(w.woken, wd)
			wake = true
		case ev.Mask&unix.IN_IGNORED != 0:
			// A removed watch (a directory gone, or a file's watch after its event).
		default:
			discover = true
		}
	}
	return discover, wake
}

// Close stops watching.
func (w *Watcher) Close() error { return w.f.Close() }
