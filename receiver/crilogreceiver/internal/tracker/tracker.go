package tracker

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"

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
	Read               ReadConfig
}

// Tracker owns the set of readers.
type Tracker struct {
	cfg     Config
	readers map[FileID]*Reader
	order   []*Reader
	known   map[FileID]State
	// firstStart is true when no checkpoint existed: start_at applies to the first discovery.
	firstStart bool
	discovered bool
	// Waiting is the number of matched files not opened because of MaxConcurrentFiles.
	Waiting int
	Stats   Stats
	buf     []byte
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
	t := &Tracker{cfg: cfg, readers: map[FileID]*Reader{}, known: map[FileID]State{}, firstStart: firstStart}
	for _, s := range known {
		t.known[s.ID] = s
	}
	t.buf = make([]byte, max(cfg.Read.MaxBytesPerRead, cfg.Read.maxLine())+1)
	return t
}

// Buffer returns the read buffer shared by all readers.
func (t *Tracker) Buffer() []byte { return t.buf }

// Readers returns the open readers in round-robin order.
func (t *Tracker) Readers() []*Reader { return t.order }

// Len returns the number of open readers.
func (t *Tracker) Len() int { return len(t.order) }

// Remove closes r and forgets it. Its successor, if any, may be read from now on.
func (t *Tracker) Remove(r *Reader) {
	_ = r.Close()
	if r.Successor != nil {
		r.Successor.HeldBy = nil
		r.Successor = nil
	}
	if r.HeldBy != nil {
		r.HeldBy.Successor = nil
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

// Match expands the include patterns, minus excludes and rotated names.
func (t *Tracker) Match() []string {
	var out []string
	seen := map[string]bool{}
	for _, inc := range t.cfg.Include {
		paths, _ := filepath.Glob(inc) // the only error is a bad pattern, rejected by Validate
		for _, p := range paths {
			if seen[p] || podpath.IsRotated(filepath.Base(p)) || t.excluded(p) {
				continue
			}
			seen[p] = true
			out = append(out, p)
		}
	}
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
func (t *Tracker) Discover(now int64) (gone []State, errs []error) {
	present := map[FileID]bool{}
	t.Waiting = 0
	for _, p := range t.Match() {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		id := fileID(st)
		if present[id] {
			continue // a second path (symlink) to a file already seen
		}
		present[id] = true
		if r, ok := t.readers[id]; ok {
			r.Draining = false
			continue
		}
		if len(t.order) >= t.cfg.MaxConcurrentFiles {
			t.Waiting++
			continue
		}
		if err := t.open(p, p, id, now, !t.discovered && t.firstStart && t.cfg.StartAtEnd); err != nil {
			errs = append(errs, err)
		}
	}
	for _, r := range t.order {
		if !present[r.ID] && !r.Draining {
			r.Draining = true
			r.LastGrowth = now
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
	r := newReader(name, f, id, &t.cfg.Read, &t.Stats)
	r.LastGrowth = now
	if s, ok := t.known[id]; ok {
		delete(t.known, id)
		if t.sameFile(f, s) {
			if err := r.restore(s); err == nil {
				t.add(r)
				return nil
			}
		}
		// An inode reused by another file, or an unreadable state: read the file anew.
	}
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

// link chains the readers of one path (rotated files, then the current one) in the order they
// were opened: each is held until the one before it is done.
func (t *Tracker) link() {
	last := map[string]*Reader{}
	for _, r := range t.order {
		prev := last[r.Path]
		last[r.Path] = r
		if prev == nil || !prev.Draining || prev.Successor != nil || r.HeldBy != nil || r.started {
			continue
		}
		prev.Successor, r.HeldBy = r, prev
	}
}

func (t *Tracker) add(r *Reader) {
	t.readers[r.ID] = r
	t.order = append(t.order, r)
}

func (t *Tracker) moveToFront(r *Reader) {
	for i, o := range t.order {
		if o == r {
			copy(t.order[1:i+1], t.order[:i])
			t.order[0] = r
			return
		}
	}
}

func (t *Tracker) sameFile(f *os.File, s State) bool {
	if s.FP.Len == 0 {
		return true
	}
	fp, err := fingerprintOf(f, s.FP.Len, t.buf)
	return err == nil && fp == s.FP
}

// findRotated resumes checkpoints whose file was renamed while we were down: it looks for the
// file among the siblings "<path>.*" (compressed ones excluded) and drains it.
func (t *Tracker) findRotated(now int64) []error {
	var errs []error
	for id, s := range t.known {
		if len(t.order) >= t.cfg.MaxConcurrentFiles {
			break
		}
		matches, _ := filepath.Glob(globEscape(s.Path) + ".*")
		for _, p := range matches {
			base := filepath.Base(p)
			if !podpath.IsRotated(base) || filepath.Ext(base) == ".gz" {
				continue
			}
			st, err := os.Stat(p)
			if err != nil || fileID(st) != id {
				continue
			}
			if err := t.open(p, s.Path, id, now, false); err != nil {
				errs = append(errs, err)
				break
			}
			if r := t.readers[id]; r != nil {
				r.Draining = true
				t.moveToFront(r) // older data first: per-stream order across the rotation
			}
			break
		}
		if _, ok := t.known[id]; !ok {
			continue // found above
		}
		// Not found uncompressed: kubelet may have compressed it while we were down.
		gz, _ := filepath.Glob(globEscape(s.Path) + ".*.gz")
		for _, p := range gz {
			ok, err := t.resumeCompressed(p, s, now)
			if err != nil {
				errs = append(errs, err)
			}
			if ok {
				break
			}
		}
	}
	return errs
}

// maxDecompressed bounds what resumeCompressed writes to a temporary file; kubelet rotates
// files at containerLogMaxSize (10 MiB by default), far below it.
const maxDecompressed = 1 << 30

// resumeCompressed resumes a checkpoint from a compressed rotated file whose decompressed
// first bytes match the checkpoint's fingerprint. The content is decompressed into an unlinked
// temporary file that the reader drains like any rotated file.
func (t *Tracker) resumeCompressed(path string, s State, now int64) (bool, error) {
	if _, taken := t.readers[s.ID]; taken || s.FP.Len == 0 {
		return false, nil
	}
	in, err := os.Open(path)
	if err != nil {
		return false, nil //nolint:nilerr // gone meanwhile: nothing to resume
	}
	defer func() { _ = in.Close() }() // read-only: closing cannot lose data
	zr, err := gzip.NewReader(in)
	if err != nil {
		return false, nil //nolint:nilerr // not gzip: not ours to read
	}
	head := make([]byte, s.FP.Len)
	if _, err := io.ReadFull(zr, head); err != nil {
		return false, nil //nolint:nilerr // shorter than the fingerprint: another file
	}
	h := fnv.New64a()
	_, _ = h.Write(head)
	if h.Sum64() != s.FP.Hash {
		return false, nil
	}
	tmp, err := os.CreateTemp("", "cri_log-*.log")
	if err != nil {
		return false, fmt.Errorf("tracker: decompressing %s: %w", path, err)
	}
	_ = os.Remove(tmp.Name()) // unlinked: it disappears when the reader closes it
	_, err = tmp.Write(head)
	if err == nil {
		_, err = io.Copy(tmp, io.LimitReader(zr, maxDecompressed))
	}
	if err != nil {
		// A corrupt or cut compressed file, or a failed write: resuming from a partial copy
		// would lose the rest without a word, so the caller reports it instead.
		_ = tmp.Close()
		return false, fmt.Errorf("tracker: decompressing %s: %w", path, err)
	}
	r := newReader(s.Path, tmp, s.ID, &t.cfg.Read, &t.Stats)
	if err := r.restore(s); err != nil {
		_ = tmp.Close()
		return false, nil //nolint:nilerr // an unreadable state: the checkpoint is forgotten
	}
	r.Draining = true
	r.LastGrowth = now
	delete(t.known, s.ID)
	t.add(r)
	t.moveToFront(r)
	return true, nil
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
