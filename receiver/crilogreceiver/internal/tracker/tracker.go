// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync/atomic"
	"syscall"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/joiner"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/podpath"
)

// Config configures a Tracker.
type Config struct {
	Include []string
	Exclude []string
	// StartAtEnd makes files present at first start be read from their end.
	StartAtEnd bool
	// MaxConcurrentFiles bounds open descriptors.
	MaxConcurrentFiles int
	// Skip, when set, leaves out a matched path that is not to be read (its Pod opted out, its
	// namespace is not selected): it is never opened and gets no checkpoint. It is called from
	// the scanning goroutine.
	Skip func(path string) bool
	Read ReadConfig
}

// Tracker owns the set of readers.
type Tracker struct {
	cfg     Config
	readers map[FileID]*Reader
	order   []*Reader
	known   map[FileID]State
	// knownByPath indexes known by path, for the fallback when a device was renumbered.
	knownByPath map[string][]FileID
	// firstStart is true when no checkpoint existed: start_at applies to the first discovery.
	firstStart bool
	discovered bool
	// pinner opens new files outside the read loop; pinned are the ones being adopted.
	pinner *Pinner
	pinned map[FileID]pin
	// retained are checkpoints whose resume failed: never deleted, so that a later start can
	// still resume them.
	retained map[FileID]State
	// parked are files closed while idle to free their slot (see Park), by identity.
	parked map[FileID]State
	// waitingSince is when a matched path was first found without a slot: the longest waiting
	// get the next slots, so late-sorting paths are not starved.
	waitingSince map[string]int64
	// Waiting is the number of matched files not opened because of MaxConcurrentFiles.
	Waiting int
	// Skipped is the number of matched files Config.Skip left out in the latest scan.
	Skipped atomic.Int64
	Stats   Stats
	// buf is the read buffer the readers share: one turn's read and room for a fingerprint
	// past it. large is for a longer line, made when first needed (Reader.largeBuffer).
	buf, large []byte
}

// New returns a Tracker. known are the states restored from storage; firstStart reports that
// storage held no checkpoint index at all.
func New(cfg Config, known []State, firstStart bool) *Tracker {
	if cfg.Read.FingerprintSize <= 0 {
		cfg.Read.FingerprintSize = 1000
	}
	if cfg.MaxConcurrentFiles <= 0 {
		cfg.MaxConcurrentFiles = 1024
	}
	t := &Tracker{
		cfg: cfg, readers: map[FileID]*Reader{}, known: map[FileID]State{}, retained: map[FileID]State{},
		firstStart: firstStart, pinned: map[FileID]pin{},
		parked: map[FileID]State{}, waitingSince: map[string]int64{},
	}
	t.pinner = newPinner(t.Match, cfg.MaxConcurrentFiles)
	t.knownByPath = map[string][]FileID{}
	for _, s := range known {
		t.known[s.ID] = s
		t.knownByPath[s.Path] = append(t.knownByPath[s.Path], s.ID)
	}
	t.buf = make([]byte, cfg.Read.MaxBytesPerRead+cfg.Read.FingerprintSize+1)
	return t
}

// Buffer returns the read buffer shared by all readers.
func (t *Tracker) Buffer() []byte { return t.buf }

// Readers returns the open readers in round-robin order.
func (t *Tracker) Readers() []*Reader { return t.order }

// Len returns the number of open readers.
func (t *Tracker) Len() int { return len(t.order) }

// PendingRecords passes the unfinished entries held in checkpoint s to sink, flushed. It is for a
// checkpoint whose file is gone: those bytes were read before the stop and live only in the
// checkpoint.
func (t *Tracker) PendingRecords(s State, now int64, sink func(*Record)) error {
	r := &Reader{
		Path: s.Path, cfg: &t.cfg.Read, stats: &t.Stats, large: &t.large,
		j: joiner.New(t.cfg.Read.joinerConfig(s.Path)),
	}
	r.Meta, r.MetaOK = podpath.Parse(s.Path)
	r.emitFunc = r.emitEntry
	if err := r.j.LoadState(s.Joiner); err != nil {
		return err
	}
	r.sink = sink
	r.j.Flush(now, -1, -1, r.emitFunc)
	r.sink = nil
	return nil
}

// Pinner returns the tracker's pinner, for a goroutine of the caller's to run Scan.
func (t *Tracker) Pinner() *Pinner { return t.pinner }

// Remove closes r and forgets it. Its successor, if any, may be read from now on.
func (t *Tracker) Remove(r *Reader) {
	_ = r.Close()
	defer func() {
		t.pinner.forget(r.ID)
		t.pinner.open.Store(int64(len(t.order)))
	}()
	if r.Successor != nil {
		r.Successor.HeldBy = nil
		r.Successor = nil
		r.SuccessorSeen = 0
	}
	if r.HeldBy != nil {
		r.HeldBy.Successor = nil
		r.HeldBy.SuccessorSeen = 0
		r.HeldBy = nil
	}
	delete(t.readers, r.ID)
	for i, o := range t.order {
		if o == r {
			t.order = append(t.order[:i], t.order[i+1:]...)
			break
		}
	}
}

// Match expands the include patterns, minus excludes and rotated names, in one walk. dirs
// receives the directories that can hold matched files (see expand).
func (t *Tracker) Match(dirs map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	skipped := int64(0)
	for _, inc := range t.cfg.Include {
		for _, p := range expand(inc, dirs) {
			if seen[p] || podpath.IsRotated(filepath.Base(p)) || t.excluded(p) {
				continue
			}
			seen[p] = true
			if t.cfg.Skip != nil && t.cfg.Skip(p) {
				skipped++
				continue
			}
			out = append(out, p)
		}
	}
	t.Skipped.Store(skipped)
	sort.Strings(out)
	return out
}

func (t *Tracker) excluded(p string) bool {
	for _, ex := range t.cfg.Exclude {
		if ok, _ := filepath.Match(ex, p); ok {
			return true
		}
	}
	return false
}

// Discover finds files, opens new ones and marks vanished ones as draining. After the first
// discovery it also looks for rotated files of restored checkpoints. It returns the states of
// checkpoints whose files are gone, for the caller to delete.
//
// The matched files are the listing of the pinner's latest scan (taken together with the files
// that scan and the ones before it pinned), or of a scan made now when there was none since
// the last discovery.
func (t *Tracker) Discover(now int64) (gone []State, errs []error) {
	present := map[FileID]bool{}
	t.Waiting = 0
	pins, listing := t.pinner.take()
	for _, p := range pins {
		t.pinned[p.id] = p
	}
	atEnd := !t.discovered && t.firstStart && t.cfg.StartAtEnd
	var found []pin
	for _, e := range listing {
		p, id := e.path, e.id
		if present[id] {
			continue // a second path (symlink) to a file already seen
		}
		present[id] = true
		if r, ok := t.readers[id]; ok {
			r.Draining = false
			continue
		}
		if s, ok := t.parked[id]; ok {
			if e.size == s.Offset {
				continue // parked and not grown: it needs no slot
			}
			// Grown: it is opened again like a file with a checkpoint, when a slot is free.
			delete(t.parked, id)
			t.known[id] = s
			t.knownByPath[s.Path] = append(t.knownByPath[s.Path], id)
		}
		found = append(found, pin{path: p, id: id})
	}
	// A parked file no longer at its path was rotated or deleted: its rotated sibling, if any,
	// is read from the parked offset.
	for id, s := range t.parked {
		if present[id] {
			continue
		}
		delete(t.parked, id)
		t.pinner.forget(id) // its inode may be reused by a new file
		t.known[id] = s
		t.knownByPath[s.Path] = append(t.knownByPath[s.Path], id)
		errs = append(errs, t.resumePath(s.Path, []State{s}, now)...)
	}
	// Slots go to the files waiting longest first, then in path order.
	for _, f := range found {
		if _, ok := t.waitingSince[f.path]; !ok {
			t.waitingSince[f.path] = now
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return t.waitingSince[found[i].path] < t.waitingSince[found[j].path] })
	for _, r := range t.order {
		if !present[r.ID] && !r.Draining {
			r.Draining = true
			r.LastGrowth = now
			t.Stats.Rotations++
		}
	}
	// Pinned files first, in the order they were pinned: a file pinned before its rotation
	// comes before the new file at its path. One no longer at a matched path was rotated or
	// deleted since it was pinned: its descriptor still holds the data, it is read draining.
	for _, p := range pins {
		if len(t.order) >= t.cfg.MaxConcurrentFiles {
			break
		}
		if _, ok := t.pinned[p.id]; !ok {
			continue
		}
		if _, parked := t.parked[p.id]; parked {
			// Pinned before the loop opened, read and parked it: its state is the parked one.
			delete(t.pinned, p.id)
			_ = p.f.Close() // read-only
			continue
		}
		if _, tracked := t.readers[p.id]; tracked {
			// Opened by a discovery of the loop while the pinner was opening it too.
			delete(t.pinned, p.id)
			_ = p.f.Close() // read-only
			continue
		}
		if err := t.open(p.path, p.path, p.id, now, atEnd && present[p.id]); err != nil {
			errs = append(errs, err)
			t.pinner.forget(p.id)
			continue
		}
		if r := t.readers[p.id]; r != nil && !present[p.id] {
			r.Draining = true
			t.Stats.Rotations++
		}
	}
	for id, p := range t.pinned {
		// Not adopted (no slot): the next scan finds it again if it is still there.
		delete(t.pinned, id)
		_ = p.f.Close() // read-only
		t.pinner.forget(id)
	}
	for _, f := range found {
		if _, ok := t.readers[f.id]; ok {
			continue // adopted from the pinner above
		}
		if len(t.order) >= t.cfg.MaxConcurrentFiles {
			t.Waiting++
			continue
		}
		delete(t.waitingSince, f.path)
		if err := t.open(f.path, f.path, f.id, now, atEnd); err != nil {
			errs = append(errs, err)
		}
	}
	for p, since := range t.waitingSince {
		if since != now && !slices.ContainsFunc(found, func(f pin) bool { return f.path == p }) {
			delete(t.waitingSince, p) // gone, or opened by the pinner
		}
	}
	if !t.discovered {
		t.discovered = true
		errs = append(errs, t.findRotated(now)...)
	}
	t.link()
	// Checkpoints of files not found are forgotten, but only once every matched file could be
	// opened: a file waiting for a slot still needs its checkpoint.
	if t.Waiting == 0 {
		for id, s := range t.known {
			gone = append(gone, s)
			delete(t.known, id)
		}
	}
	return gone, errs
}

// open starts a reader for path, resuming a matching checkpoint if there is one. name is the
// path the file's metadata comes from: path itself, or the name a rotated file had.
func (t *Tracker) open(path, name string, id FileID, now int64, atEnd bool) error {
	f, err := os.Open(path)
	if p, ok := t.pinned[id]; ok {
		// Opened by the pinner already: its descriptor is the one that holds the data.
		delete(t.pinned, id)
		if err == nil {
			_ = f.Close() // read-only; the pinned descriptor is used
		}
		f, err = p.f, nil
	}
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil || fileID(st) != id {
		_ = f.Close()
		if err == nil {
			err = fmt.Errorf("tracker: %s was replaced while opening", path)
		}
		return err
	}
	r := newReader(name, f, id, &t.cfg.Read, &t.Stats, &t.large)
	r.LastGrowth = now
	if s, ok := t.resumable(f, name, id); ok {
		delete(t.known, s.ID)
		if err := r.restore(s); err == nil {
			t.add(r)
			return nil
		}
		// An unreadable state: read the file anew.
	}
	// An inode reused by another file (ext4 hands a freed inode to the next new file at once)
	// leaves the checkpoint known: its file may be found among the rotated siblings.
	if atEnd {
		off, err := lastLineEnd(f, st.Size(), t.buf)
		if err != nil {
			_ = f.Close()
			return err
		}
		r.offset = off
	}
	t.add(r)
	return nil
}

// resumable returns the checkpoint of the file f (identity id, found at or rotated from name):
// the one with the same device, inode and fingerprint, or else, when the device number changed
// (a reboot can renumber devices), one saved for the same path with the same inode and
// fingerprint.
func (t *Tracker) resumable(f *os.File, name string, id FileID) (State, bool) {
	if s, ok := t.known[id]; ok && t.sameFile(f, s) {
		return s, true
	}
	for _, kid := range t.knownByPath[name] {
		s, ok := t.known[kid]
		if ok && s.ID.Dev != id.Dev && s.ID.Ino == id.Ino && s.FP.Len > 0 && t.sameFile(f, s) {
			return s, true
		}
	}
	return State{}, false
}

// Retained returns the checkpoints whose resume failed. They are not deleted: the caller keeps
// them in its index so that a later start can resume them.
func (t *Tracker) Retained() []State {
	out := make([]State, 0, len(t.retained))
	for _, s := range t.retained {
		out = append(out, s)
	}
	return out
}

// link chains the readers of one path: rotated files found at a restart in the order of their
// names (kubelet's timestamps), then the others in the order they were opened. Each is held
// until the one before it is done.
func (t *Tracker) link() {
	groups := map[string][]*Reader{}
	var paths []string
	for _, r := range t.order {
		if _, ok := groups[r.Path]; !ok {
			paths = append(paths, r.Path)
		}
		groups[r.Path] = append(groups[r.Path], r)
	}
	for _, p := range paths {
		g := groups[p]
		if len(g) < 2 {
			continue
		}
		sort.SliceStable(g, func(i, j int) bool {
			return g[i].rotatedAs != "" && (g[j].rotatedAs == "" || g[i].rotatedAs < g[j].rotatedAs)
		})
		for i := 1; i < len(g); i++ {
			prev, r := g[i-1], g[i]
			if !prev.Draining || prev.Successor != nil || r.HeldBy != nil || r.started {
				continue
			}
			prev.Successor, r.HeldBy = r, prev
		}
	}
}

// Park closes an idle reader to free its slot for a waiting file, keeping its state (key is its
// checkpoint's storage key): when the file grows it is opened again and resumed, when it is
// rotated its rotated sibling is. The pinner keeps ignoring it meanwhile.
func (t *Tracker) Park(r *Reader, key string) {
	s := r.State()
	s.Key = key
	_ = r.Close()
	delete(t.readers, r.ID)
	t.order = slices.DeleteFunc(t.order, func(o *Reader) bool { return o == r })
	t.pinner.open.Store(int64(len(t.order)))
	t.parked[r.ID] = s
}

// Parked returns the states of the parked files, whose checkpoints must be kept.
func (t *Tracker) Parked() []State {
	out := make([]State, 0, len(t.parked))
	for _, s := range t.parked {
		out = append(out, s)
	}
	return out
}

// Limited reports whether files wait for a slot (found by the loop's discovery or skipped by
// the pinner at the limit).
func (t *Tracker) Limited() bool { return t.Waiting > 0 || t.pinner.limited.Load() > 0 }

func (t *Tracker) add(r *Reader) {
	t.readers[r.ID] = r
	t.order = append(t.order, r)
	t.pinner.track(r.ID)
	t.pinner.open.Store(int64(len(t.order)))
}

func (t *Tracker) sameFile(f *os.File, s State) bool {
	if s.FP.Len == 0 {
		return true
	}
	fp, err := fingerprintOf(f, s.FP.Len, t.buf)
	return err == nil && fp == s.FP
}

func globEscape(p string) string {
	var b bytes.Buffer
	for _, c := range []byte(p) {
		switch c {
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// lastLineEnd returns the offset just after the last newline in the file's last 64 KiB (or 0).
func lastLineEnd(f *os.File, size int64, buf []byte) (int64, error) {
	n := min(size, int64(64<<10), int64(len(buf)))
	start := size - n
	got, err := f.ReadAt(buf[:n], start)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	if i := bytes.LastIndexByte(buf[:got], '\n'); i >= 0 {
		return start + int64(i) + 1, nil
	}
	if start == 0 {
		return 0, nil
	}
	return size, nil
}

func fileID(st os.FileInfo) FileID {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return FileID{Dev: uint64(s.Dev), Ino: uint64(s.Ino)} //nolint:unconvert // int width differs by platform
	}
	return FileID{}
}
