// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"compress/gzip"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/podpath"
)

// syntheticDev is the device number of a decompressed stream's identity: it has no device and
// inode of its own. Its inode number is a hash of the compressed file's path, so the identity
// (and the checkpoint key) is the same at every start.
const syntheticDev = ^uint64(0)

func syntheticID(gzPath string) FileID {
	h := fnv.New64a()
	_, _ = h.Write([]byte(gzPath))
	return FileID{Dev: syntheticDev, Ino: h.Sum64()}
}

// findRotated runs at the first discovery after a restart. For every path with checkpoints not
// found at the path itself, it reads the rotated siblings from the oldest one a checkpoint
// belongs to through the newest: kubelet may have rotated more than once while the collector was
// down, and a file rotated in between was never opened.
func (t *Tracker) findRotated(now int64) []error {
	byPath := map[string][]State{}
	for _, s := range t.known {
		byPath[s.Path] = append(byPath[s.Path], s)
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var errs []error
	for _, p := range paths {
		if len(t.order) >= t.cfg.MaxConcurrentFiles {
			break
		}
		errs = append(errs, t.resumePath(p, byPath[p], now)...)
	}
	return errs
}

// rotatedSiblings returns the rotated files of path (kubelet's <path>.<timestamp>, compressed
// or not), oldest first.
func rotatedSiblings(path string) []string {
	matches, _ := filepath.Glob(globEscape(path) + ".*")
	var out []string
	for _, m := range matches {
		base := strings.TrimSuffix(filepath.Base(m), ".gz")
		if podpath.IsRotated(base) && !strings.HasSuffix(base, ".tmp") {
			out = append(out, m)
		}
	}
	// Timestamps sort by time; a plain name and its .gz (both present while kubelet
	// compresses) sort next to each other.
	sort.Strings(out)
	return out
}

func (t *Tracker) resumePath(path string, states []State, now int64) []error {
	sibs := rotatedSiblings(path)
	owner := make([]*State, len(sibs))
	first := -1
	for i, sib := range sibs {
		for k := range states {
			if _, open := t.known[states[k].ID]; !open {
				continue
			}
			if t.belongsTo(sib, states[k]) {
				owner[i] = &states[k]
				break
			}
		}
		if owner[i] != nil && first < 0 {
			first = i
		}
	}
	if first < 0 {
		return nil // the checkpointed file is gone (or still at its path)
	}
	var errs []error
	for i := first; i < len(sibs); i++ {
		sib := sibs[i]
		if strings.HasSuffix(sib, ".gz") && i+1 < len(sibs) && sibs[i+1] == strings.TrimSuffix(sib, ".gz") {
			continue // kubelet is compressing it: the plain file is complete, the .gz may not be
		}
		err := t.openRotated(sib, path, owner[i], now)
		if err == nil {
			continue
		}
		t.Stats.ResumeFailures++
		errs = append(errs, err)
		if s := owner[i]; s != nil {
			// Never delete a checkpoint whose resume failed: a later start may succeed.
			delete(t.known, s.ID)
			t.retained[s.ID] = *s
		}
	}
	return errs
}

// belongsTo reports whether the rotated file sib is the file of checkpoint s.
func (t *Tracker) belongsTo(sib string, s State) bool {
	if strings.HasSuffix(sib, ".gz") {
		if s.FP.Len == 0 {
			return false
		}
		fp, err := gzFingerprint(sib, s.FP.Len)
		return err == nil && fp == s.FP
	}
	st, err := os.Stat(sib)
	if err != nil {
		return false
	}
	// The same inode; the device may have been renumbered by a reboot (the fingerprint decides).
	if id := fileID(st); id.Ino != s.ID.Ino || (id.Dev != s.ID.Dev && s.FP.Len == 0) {
		return false
	}
	f, err := os.Open(sib)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }() // read-only
	return t.sameFile(f, s)
}

// openRotated opens a rotated file found at a restart as a draining reader named name, resuming
// checkpoint s when it is the file's, from the start otherwise.
func (t *Tracker) openRotated(sib, name string, s *State, now int64) error {
	var r *Reader
	if strings.HasSuffix(sib, ".gz") {
		id := syntheticID(sib)
		if _, taken := t.readers[id]; taken {
			return nil
		}
		g, fp, err := openGz(sib, t.cfg.Read.FingerprintSize)
		if err != nil {
			return fmt.Errorf("tracker: reading %s: %w", sib, err)
		}
		r = newReader(name, g.f, id, &t.cfg.Read, &t.Stats, &t.large)
		r.gz, r.fp = g, fp
		if s != nil {
			if err := r.restore(*s); err != nil {
				_ = r.Close()
				return fmt.Errorf("tracker: resuming %s: %w", sib, err)
			}
			delete(t.known, s.ID)
		}
		t.add(r)
	} else {
		st, err := os.Stat(sib)
		if err != nil {
			return fmt.Errorf("tracker: %s: %w", sib, err)
		}
		id := fileID(st)
		if _, taken := t.readers[id]; taken {
			return nil
		}
		if s != nil && s.ID.Ino != id.Ino {
			return fmt.Errorf("tracker: %s was replaced", sib)
		}
		if err := t.open(sib, name, id, now, false); err != nil {
			return err
		}
		r = t.readers[id]
	}
	r.rotatedAs = filepath.Base(sib)
	r.Draining = true
	r.LastGrowth = now
	return nil
}

// gzFingerprint hashes the first n decompressed bytes of a gzip file.
func gzFingerprint(path string, n int) (Fingerprint, error) {
	f, err := os.Open(path)
	if err != nil {
		return Fingerprint{}, err
	}
	defer func() { _ = f.Close() }() // read-only
	zr, err := gzip.NewReader(f)
	if err != nil {
		return Fingerprint{}, err
	}
	h := fnv.New64a()
	got, err := io.Copy(h, io.LimitReader(zr, int64(n)))
	if err != nil {
		return Fingerprint{}, err
	}
	return Fingerprint{Len: int(got), Hash: h.Sum64()}, nil
}

// gzSource reads a gzip file's decompressed content as a stream, with no temporary file (the
// DaemonSet's root filesystem is read-only). Reads go forward; the bytes of the last read are
// kept, so the next read may start anywhere inside them (a reader re-reads an unfinished line).
type gzSource struct {
	f       *os.File
	zr      *gzip.Reader
	size    int64 // decompressed size, from a first pass
	pos     int64 // decompressed bytes taken from zr
	keepOff int64
	keep    []byte
}

// maxDecompressed bounds the decompressed size of a rotated file read at a restart.
const maxDecompressed = 1 << 30

// errBackwards reports a read before the kept window: a bug, not a condition of the data.
var errBackwards = errors.New("tracker: compressed stream read backwards")

// openGz opens a gzip file and decompresses it once to learn its size and check that it is
// whole (a cut or corrupt file is reported before anything of it is read), hashing its first
// fpSize bytes on the way.
func openGz(path string, fpSize int) (*gzSource, Fingerprint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Fingerprint{}, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		_ = f.Close() // read-only
		return nil, Fingerprint{}, err
	}
	h := fnv.New64a()
	head, err := io.Copy(h, io.LimitReader(zr, int64(fpSize)))
	var rest int64
	if err == nil {
		// Bounded: kubelet rotates at containerLogMaxSize (10 MiB by default), far below it.
		rest, err = io.CopyN(io.Discard, zr, maxDecompressed)
		switch {
		case errors.Is(err, io.EOF):
			err = nil
		case err == nil:
			err = fmt.Errorf("more than %d bytes decompressed", maxDecompressed)
		}
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err == nil {
		err = zr.Reset(f)
	}
	if err != nil {
		_ = f.Close() // read-only
		return nil, Fingerprint{}, err
	}
	return &gzSource{f: f, zr: zr, size: head + rest}, Fingerprint{Len: int(head), Hash: h.Sum64()}, nil
}

// ReadAt reads len(b) decompressed bytes at off (fewer at the end, with io.EOF).
func (g *gzSource) ReadAt(b []byte, off int64) (int, error) {
	if off < g.keepOff {
		return 0, errBackwards
	}
	end := g.keepOff + int64(len(g.keep))
	if off >= end {
		if _, err := io.CopyN(io.Discard, g.zr, off-g.pos); err != nil {
			return 0, err
		}
		g.pos, g.keepOff, g.keep = off, off, g.keep[:0]
	} else {
		n := copy(g.keep, g.keep[off-g.keepOff:])
		g.keep, g.keepOff = g.keep[:n], off
	}
	for len(g.keep) < len(b) && g.pos < g.size {
		if cap(g.keep) < len(b) {
			g.keep = append(make([]byte, 0, len(b)), g.keep...)
		}
		n, err := g.zr.Read(g.keep[len(g.keep):len(b)])
		g.keep = g.keep[:len(g.keep)+n]
		g.pos += int64(n)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if n == 0 && err != nil {
			break
		}
	}
	n := copy(b, g.keep)
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// release drops the kept window; the reader closes the file.
func (g *gzSource) release() { g.keep = nil }
