//go:build linux

package tracker

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

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
	// Written receives a signal (coalesced) after a file watched with WatchFile was written;
	// Modified tells which.
	Written chan struct{}

	fileMu   sync.Mutex
	files    map[int]bool // watch descriptors of WatchFile's watches
	modified []int
	overflow bool
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
		Written: make(chan struct{}, 1), files: map[int]bool{},
	}
	w.Refresh()
	go w.loop()
	return w, nil
}

// Refresh adds watches for new directories and forgets those that are gone. It returns the
// number of watched directories.
func (w *Watcher) Refresh() int {
	w.Expand()
	return len(w.watched)
}

// Expand lists the paths the include patterns match (unfiltered, as filepath.Glob gives them)
// and refreshes the watches in the same walk: each directory is watched before it is listed, so
// an entry created after the listing raises an event; directories no longer seen are forgotten.
func (w *Watcher) Expand() []string {
	seen := map[string]bool{}
	visit := func(d string) {
		if seen[d] {
			return
		}
		seen[d] = true
		if _, ok := w.watched[d]; ok {
			return
		}
		wd, err := addWatch(w.fd, d, dirEvents)
		if errors.Is(err, unix.ENOENT) {
			return // removed since the listing (a pod deleted): nothing to watch
		}
		if err != nil {
			// ENOSPC: fs.inotify.max_user_watches reached. Polling still finds its files.
			w.errMu.Lock()
			w.lastErr = fmt.Errorf("watching %s: %w", d, err)
			w.errMu.Unlock()
			w.Errors.Add(1)
			return
		}
		w.watched[d] = wd
	}
	var paths []string
	for _, inc := range w.include {
		paths = append(paths, expand(inc, visit)...)
	}
	for d, wd := range w.watched {
		if !seen[d] {
			_, _ = unix.InotifyRmWatch(w.fd, uint32(wd)) //nolint:gosec // watch descriptors are small
			delete(w.watched, d)
		}
	}
	return paths
}

func (w *Watcher) loop() {
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		dirs, files := false, false
		w.fileMu.Lock()
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off])) //nolint:gosec // the kernel writes whole events, aligned
			off += unix.SizeofInotifyEvent + int(ev.Len)
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				// Events were lost: every watched file may have been written, and the
				// directories changed.
				w.overflow, files, dirs = true, true, true
			case ev.Mask&unix.IN_IGNORED != 0:
				// A watch went (removed, or its file deleted): nothing changed.
			case ev.Mask&unix.IN_MODIFY != 0:
				// Only WatchFile asks for writes; one of a watch removed since is dropped.
				if w.files[int(ev.Wd)] {
					w.modified = append(w.modified, int(ev.Wd))
					files = true
				}
			default:
				// A directory's entry was created, renamed or removed; which does not matter,
				// discovery compares the whole file set.
				dirs = true
			}
		}
		w.fileMu.Unlock()
		for _, c := range []struct {
			ch  chan struct{}
			hit bool
		}{{w.Discover, dirs}, {w.Written, files}} {
			if !c.hit {
				continue
			}
			select {
			case c.ch <- struct{}{}:
			default:
			}
		}
	}
}

// WatchFile watches the open file f for writes: the watch is on the file f reads (through
// /proc/self/fd), wherever it has been renamed since. ok is false when it cannot be watched
// (fs.inotify.max_user_watches reached, no /proc): the caller then keeps polling it.
func (w *Watcher) WatchFile(f *os.File) (wd int, ok bool) {
	wd, err := addWatch(w.fd, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.IN_MODIFY) //nolint:gosec // descriptors are small
	if err != nil {
		w.errMu.Lock()
		w.lastErr = fmt.Errorf("watching %s: %w", f.Name(), err)
		w.errMu.Unlock()
		w.Errors.Add(1)
		return 0, false
	}
	w.fileMu.Lock()
	w.files[wd] = true
	w.fileMu.Unlock()
	return wd, true
}

// UnwatchFile removes a watch WatchFile made.
func (w *Watcher) UnwatchFile(wd int) {
	w.fileMu.Lock()
	delete(w.files, wd)
	w.fileMu.Unlock()
	_, _ = unix.InotifyRmWatch(w.fd, uint32(wd)) //nolint:gosec // watch descriptors are small
}

// Modified returns the watch descriptors of the files written since the last call (a file may
// be named more than once), and all = true when events were lost meanwhile: every watched file
// may have been written.
func (w *Watcher) Modified() (wds []int, all bool) {
	w.fileMu.Lock()
	defer w.fileMu.Unlock()
	wds, all = w.modified, w.overflow
	w.modified, w.overflow = nil, false
	return wds, all
}

// Close stops watching.
func (w *Watcher) Close() error { return w.f.Close() }
