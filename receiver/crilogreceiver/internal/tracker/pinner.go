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

// Pinner finds and opens new files outside the read loop, so that discovery does not depend on
// the loop's progress: while the loop is busy, or blocked in the next consumer, a new file is
// still opened at once, and its descriptor keeps its data readable through a rotation or the
// deletion of its pod. The loop adopts the pinned files at its next discovery.
type Pinner struct {
	match func() []string
	limit int

	mu     sync.Mutex
	seen   map[FileID]bool // pinned, or tracked by the loop
	queue  []pin
	ready  chan struct{}
	open   atomic.Int64 // readers the loop holds, for the limit
	closed bool

	// Vanished counts matched paths gone before they could be opened.
	Vanished atomic.Int64
	// Errors counts paths that could not be opened for another reason.
	Errors atomic.Int64
	// limited is the number of new files the last scan left for lack of a slot.
	limited atomic.Int64
}

func newPinner(match func() []string, limit int) *Pinner {
	return &Pinner{match: match, limit: limit, seen: map[FileID]bool{}, ready: make(chan struct{}, 1)}
}

// Ready is signaled when files are waiting to be adopted.
func (p *Pinner) Ready() <-chan struct{} { return p.ready }

// Scan expands the include patterns and opens every file not pinned or tracked yet, within the
// open-file limit. It is safe to call from any goroutine.
func (p *Pinner) Scan() {
	var found []pin
	limited := int64(0)
	defer func() { p.limited.Store(limited) }()
	for _, path := range p.match() {
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
	if len(found) == 0 {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
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
	p.mu.Unlock()
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

// Pending returns the number of pinned files waiting to be adopted.
func (p *Pinner) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// take returns the pinned files and empties the queue.
func (p *Pinner) take() []pin {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queue
	p.queue = nil
	return q
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
