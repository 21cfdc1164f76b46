// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
)

// pin is a file opened by the Pinner, waiting for the read loop to adopt it.
type pin struct {
	path string
	id   FileID
	f    *os.File
}

// listed is a matched regular file as a scan found it.
type listed struct {
	path string
	id   FileID
	size int64
}

// Pinner finds and opens new files outside the read loop, so that discovery does not depend on
// the loop's progress: while the loop is busy, or blocked in the next consumer, a new file is
// still opened at once, and its descriptor keeps its data readable through a rotation or the
// deletion of its pod. The loop adopts the pinned files at its next discovery, with the listing
// of the latest scan: the patterns are walked once per scan, for both.
type Pinner struct {
	match func(dirs map[string]bool) []string
	limit int

	// scanMu makes scans one at a time: listings are published in the order they were made,
	// so a listing taken is never older than a pinned file taken with it.
	scanMu sync.Mutex

	mu      sync.Mutex
	seen    map[FileID]bool // pinned, or tracked by the loop
	queue   []pin
	listing []listed
	fresh   bool          // a scan was published since the last take
	ready   chan struct{} // signaled while fresh
	open    atomic.Int64  // readers the loop holds, for the limit
	closed  bool

	// Vanished counts matched paths gone before they could be opened.
	Vanished atomic.Int64
	// Errors counts paths that could not be opened for another reason.
	Errors atomic.Int64
	// limited is the number of new files the last scan left for lack of a slot.
	limited atomic.Int64
}

func newPinner(match func(map[string]bool) []string, limit int) *Pinner {
	return &Pinner{match: match, limit: limit, seen: map[FileID]bool{}, ready: make(chan struct{}, 1)}
}

// Ready is signaled when a scan was made since the last discovery: its listing and the files
// it pinned are waiting to be adopted.
func (p *Pinner) Ready() <-chan struct{} { return p.ready }

// maxRelists bounds the walks of one scan after new directories got their watches.
const maxRelists = 3

// Scan expands the include patterns and opens every file not pinned or tracked yet, within the
// open-file limit. With a watcher, the directories the walk went through are watched first; a
// directory that was not watched before is walked again once its watch is in place, so a file
// created in it meanwhile raises an event or is in the listing. It is safe to call from any
// goroutine, but only one goroutine may pass a watcher.
func (p *Pinner) Scan(w *Watcher) {
	p.scanMu.Lock()
	defer p.scanMu.Unlock()
	dirs := map[string]bool{}
	paths := p.match(dirs)
	for i := 0; w != nil && i < maxRelists && w.Watch(dirs) > 0; i++ {
		clear(dirs)
		paths = p.match(dirs)
	}
	var found []pin
	listing := make([]listed, 0, len(paths))
	limited := int64(0)
	defer func() { p.limited.Store(limited) }()
	for _, path := range paths {
		st, err := os.Stat(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				p.Vanished.Add(1)
			}
			continue
		}
		if !st.Mode().IsRegular() {
			continue
		}
		id := fileID(st)
		listing = append(listing, listed{path: path, id: id, size: st.Size()})
		p.mu.Lock()
		seen := p.seen[id]
		full := int(p.open.Load())+len(p.queue)+len(found) >= p.limit
		p.mu.Unlock()
		if seen {
			continue
		}
		if full {
			limited++
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				p.Vanished.Add(1)
			} else {
				p.Errors.Add(1)
			}
			continue
		}
		if fst, err := f.Stat(); err != nil || fileID(fst) != id {
			_ = f.Close() // replaced between stat and open: the next scan sees the new file
			continue
		}
		found = append(found, pin{path: path, id: id, f: f})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, f := range found {
			_ = f.f.Close()
		}
		return
	}
	for _, f := range found {
		if p.seen[f.id] {
			_ = f.f.Close() // pinned meanwhile by another scan
			continue
		}
		p.seen[f.id] = true
		p.queue = append(p.queue, f)
	}
	p.listing = listing
	if !p.fresh {
		p.fresh = true
		signal(p.ready)
	}
}

// signal sends on a channel of one slot without waiting: signals coalesce.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Pending returns the number of pinned files waiting to be adopted.
func (p *Pinner) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// take returns the pinned files, emptying the queue, and the listing of the latest scan. When no
// scan was made since the last take, it scans first, on the caller's goroutine.
func (p *Pinner) take() ([]pin, []listed) {
	p.mu.Lock()
	fresh := p.fresh
	p.mu.Unlock()
	if !fresh {
		p.Scan(nil)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	q, l := p.queue, p.listing
	p.queue, p.fresh = nil, false
	select {
	case <-p.ready: // taken: the signal is for the next scan
	default:
	}
	return q, l
}

// track records that the loop holds a reader of id (forget: no longer).
func (p *Pinner) track(id FileID) {
	p.mu.Lock()
	p.seen[id] = true
	p.mu.Unlock()
}

func (p *Pinner) forget(id FileID) {
	p.mu.Lock()
	delete(p.seen, id)
	p.mu.Unlock()
}

// Close closes the files still waiting; later scans pin nothing.
func (p *Pinner) Close() {
	p.mu.Lock()
	q := p.queue
	p.queue, p.closed = nil, true
	p.mu.Unlock()
	for _, f := range q {
		_ = f.f.Close()
	}
}
