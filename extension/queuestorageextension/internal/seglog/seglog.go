// SPDX-License-Identifier: Apache-2.0

// Package seglog is the append-only segment log behind one queue_storage client: keys and
// values in record groups appended to segment files, an in-memory index of the live keys,
// whole-segment removal and bounded compaction. The rules are in the component's design.md.
package seglog

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

// Metrics receives the log's telemetry (design.md, rule 12).
type Metrics interface {
	BytesWritten(n int64)
	BytesRead(n int64)
	Segments(delta int64)
	LiveBytes(delta int64)
	Compaction()
	RecoveryDropped(n int64)
	ReadCorrupt()
}

// Options configure a Store.
type Options struct {
	// SegmentSize is the size at which the active segment is sealed and a new one started.
	SegmentSize int64
	// Fsync flushes every group, and the directory after a segment is created or removed.
	Fsync bool
	// Logger gets the warnings of recovery and compaction; nil: none.
	Logger *zap.Logger
	// Metrics gets the telemetry; nil: none.
	Metrics Metrics
}

// ErrClosed is returned by calls after Close.
var ErrClosed = errors.New("queue_storage: client closed")

const segmentSuffix = ".seg"

// loc is where the newest set record of a live key is.
type loc struct {
	seg *segment
	off int64
	n   uint32
}

type segment struct {
	id   uint64
	path string
	f    *os.File
	size int64
	live int64
	// full is set when a failed write could not be truncated away: nothing follows it.
	full bool
	// setKeys holds every key with a set record in the segment, live or not; tombKeys every key
	// with a tombstone that deleted a live key (rule 7 decides which of them are still needed).
	setKeys  map[string]struct{}
	tombKeys map[string]struct{}
}

// Store is one client's log. Its methods are safe for concurrent use.
type Store struct {
	mu     sync.Mutex
	dir    string
	opts   Options
	lock   *os.File
	segs   []*segment // by id; the last one is the active segment
	index  map[string]loc
	nextID uint64
	buf    []byte
	closed bool
}

// Open opens (creating when empty) the log in dir, which must exist, and recovers it
// (design.md, rule 10).
func Open(dir string, opts Options) (*Store, error) {
	if opts.SegmentSize <= 0 {
		return nil, fmt.Errorf("queue_storage: segment size %d", opts.SegmentSize)
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Metrics == nil {
		opts.Metrics = nopMetrics{}
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, opts: opts, lock: lock, index: map[string]loc{}, nextID: 1}
	if err := s.recover(); err != nil {
		_ = s.closeFiles()
		return nil, err
	}
	if err := s.newActive(); err != nil {
		_ = s.closeFiles()
		return nil, err
	}
	if err := s.maintain(); err != nil {
		s.opts.Logger.Warn("queue_storage: removing or compacting segments failed; trying again at the next write", zap.Error(err))
	}
	return s, nil
}

// segmentFiles lists the segment files of dir by id.
func (s *Store) segmentFiles() ([]uint64, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("queue_storage: listing %s: %w", s.dir, err)
	}
	var ids []uint64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), segmentSuffix)
		if !ok || len(name) != 16 || !e.Type().IsRegular() {
			continue
		}
		id, err := strconv.ParseUint(name, 16, 64)
		if err != nil || id == 0 {
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

func (s *Store) segmentPath(id uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%016x%s", id, segmentSuffix))
}

func (s *Store) recover() error {
	ids, err := s.segmentFiles()
	if err != nil {
		return err
	}
	for _, id := range ids {
		s.nextID = max(s.nextID, id+1)
		if seg := s.recoverSegment(id); seg != nil {
			s.segs = append(s.segs, seg)
			s.opts.Metrics.Segments(1)
		}
	}
	return nil
}

// recoverSegment reads one segment's valid groups into the index; nil when it cannot be read.
func (s *Store) recoverSegment(id uint64) *segment {
	path := s.segmentPath(id)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		s.dropUnreadable(path, err)
		return nil
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		s.dropUnreadable(path, err)
		return nil
	}
	seg := &segment{id: id, path: path, f: f, setKeys: map[string]struct{}{}, tombKeys: map[string]struct{}{}}
	valid, readErr, formatErr := s.replay(seg, io.NewSectionReader(f, 0, info.Size()), info.Size())
	seg.size = valid
	if dropped := info.Size() - valid; dropped > 0 {
		s.opts.Metrics.RecoveryDropped(dropped)
		cause := formatErr
		if readErr != nil {
			cause = readErr
		}
		s.opts.Logger.Warn("queue_storage: dropping the end of a segment that is torn or corrupt",
			zap.String("file", path), zap.Int64("offset", valid), zap.Int64("bytes", dropped), zap.Error(cause))
		if readErr == nil {
			if err := f.Truncate(valid); err != nil {
				s.opts.Logger.Warn("queue_storage: truncating a segment failed", zap.String("file", path), zap.Error(err))
			}
		}
	}
	return seg
}

func (s *Store) dropUnreadable(path string, err error) {
	if info, statErr := os.Stat(path); statErr == nil {
		s.opts.Metrics.RecoveryDropped(info.Size())
	}
	s.opts.Logger.Warn("queue_storage: leaving out a segment that cannot be read", zap.String("file", path), zap.Error(err))
}

// replay applies the valid groups of r (size bytes) to the index and returns the length of
// the valid part and why it ended early: a read error or a format error.
func (s *Store) replay(seg *segment, r io.Reader, size int64) (valid int64, readErr, formatErr error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var hdr [groupHeaderSize]byte
	var payload []byte
	for valid < size {
		if size-valid < groupHeaderSize {
			return valid, nil, fmt.Errorf("%w: %d bytes after the last group", errCorrupt, size-valid)
		}
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return valid, err, nil
		}
		h, err := parseGroupHeader(hdr[:])
		if err != nil {
			return valid, nil, err
		}
		if int64(h.length) > size-valid-groupHeaderSize {
			return valid, nil, fmt.Errorf("%w: group of %d bytes, %d left in the file", errCorrupt, h.length, size-valid-groupHeaderSize)
		}
		if cap(payload) < int(h.length) {
			payload = make([]byte, h.length)
		}
		payload = payload[:h.length]
		if _, err := io.ReadFull(br, payload); err != nil {
			return valid, err, nil
		}
		base := valid + groupHeaderSize
		if err := parseGroupRecords(h, payload, func(off int, r record) {
			s.apply(seg, base+int64(off), r.kind, string(r.key), uint32(r.size)) //nolint:gosec // a record is at most 2 GiB + 13
		}); err != nil {
			return valid, nil, err
		}
		valid = base + int64(h.length)
	}
	return valid, nil, nil
}

// apply changes the index and the accounting for one record written at seg/off (rules 5, 7).
func (s *Store) apply(seg *segment, off int64, kind byte, key string, n uint32) {
	if kind == kindSet {
		s.unlive(key)
		s.index[key] = loc{seg: seg, off: off, n: n}
		seg.live += int64(n)
		s.opts.Metrics.LiveBytes(int64(n))
		seg.setKeys[key] = struct{}{}
		return
	}
	if s.unlive(key) {
		seg.tombKeys[key] = struct{}{}
	}
}

// unlive removes key from the index; it reports whether it was live.
func (s *Store) unlive(key string) bool {
	old, ok := s.index[key]
	if !ok {
		return false
	}
	delete(s.index, key)
	old.seg.live -= int64(old.n)
	s.opts.Metrics.LiveBytes(-int64(old.n))
	return true
}

func (s *Store) active() *segment {
	if len(s.segs) == 0 {
		return nil
	}
	return s.segs[len(s.segs)-1]
}

// newActive seals the active segment and starts the next one (rule 6).
func (s *Store) newActive() error {
	id := s.nextID
	path := s.segmentPath(id)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // G703: a segment name of our own in the client's directory
	if err != nil {
		return fmt.Errorf("queue_storage: creating a segment: %w", err)
	}
	if s.opts.Fsync {
		if err := syncDir(s.dir); err != nil {
			_ = f.Close()
			_ = os.Remove(path) //nolint:gosec // G703: a segment name of our own in the client's directory
			return err
		}
	}
	s.nextID++
	s.segs = append(s.segs, &segment{id: id, path: path, f: f, setKeys: map[string]struct{}{}, tombKeys: map[string]struct{}{}})
	s.opts.Metrics.Segments(1)
	return nil
}

// writeGroup writes a finished group at the end of the active segment, starting a new one
// first when the group does not fit (rules 3, 6, 9, 11). It returns where the group starts.
func (s *Store) writeGroup(group []byte) (*segment, int64, error) {
	if a := s.active(); a.full || a.size > 0 && a.size+int64(len(group)) > s.opts.SegmentSize {
		if err := s.newActive(); err != nil {
			return nil, 0, err
		}
	}
	seg := s.active()
	off := seg.size
	_, err := seg.f.WriteAt(group, off)
	if err == nil && s.opts.Fsync {
		err = seg.f.Sync()
	}
	if err != nil {
		if tErr := seg.f.Truncate(off); tErr != nil {
			s.opts.Logger.Warn("queue_storage: truncating a failed write failed; sealing the segment", zap.String("file", seg.path), zap.Error(tErr))
			// The next group goes to a new segment, never after the partial one.
			seg.full = true
		}
		if errors.Is(err, syscall.ENOSPC) {
			return nil, 0, fmt.Errorf("%w: %w", storage.ErrStorageFull, err)
		}
		return nil, 0, fmt.Errorf("queue_storage: writing %s: %w", seg.path, err)
	}
	seg.size += int64(len(group))
	s.opts.Metrics.BytesWritten(int64(len(group)))
	return seg, off, nil
}

// read returns the value of a live key, nil when it is not live (rule 4).
func (s *Store) read(key string) ([]byte, error) {
	l, ok := s.index[key]
	if !ok {
		return nil, nil
	}
	rec, _, err := s.readRecord(key, l)
	if err != nil {
		return nil, err
	}
	s.opts.Metrics.BytesRead(int64(l.n))
	return rec.value, nil
}

// readRecord reads and checks the record of a live key; it returns the record and its bytes.
func (s *Store) readRecord(key string, l loc) (record, []byte, error) {
	b := make([]byte, l.n)
	if _, err := l.seg.f.ReadAt(b, l.off); err != nil {
		return record{}, nil, fmt.Errorf("queue_storage: reading %q from %s: %w", key, l.seg.path, err)
	}
	rec, err := parseRecord(b)
	if err == nil && (rec.kind != kindSet || string(rec.key) != key) {
		err = fmt.Errorf("%w: another record than the index's", errCorrupt)
	}
	if err != nil {
		s.opts.Metrics.ReadCorrupt()
		return record{}, nil, fmt.Errorf("queue_storage: reading %q from %s at %d: %w", key, l.seg.path, l.off, err)
	}
	return rec, b, nil
}

// pendingWrite is a record of the batch being built.
type pendingWrite struct {
	kind  byte
	key   string
	off   int // in the group
	value []byte
}

// Batch applies ops in order as one group (rule 3); gets see the batch's earlier writes.
func (s *Store) Batch(ops ...*storage.Operation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	var writes []pendingWrite
	last := func(key string) (pendingWrite, bool) {
		for i := len(writes) - 1; i >= 0; i-- {
			if writes[i].key == key {
				return writes[i], true
			}
		}
		return pendingWrite{}, false
	}
	size := 0
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			if w, ok := last(op.Key); ok {
				if w.kind == kindSet {
					op.Value = slices.Clone(w.value)
				} else {
					op.Value = nil
				}
				continue
			}
			v, err := s.read(op.Key)
			if err != nil {
				return err
			}
			op.Value = v
		case storage.Set:
			if len(op.Key) > MaxKeyOrValue || len(op.Value) > MaxKeyOrValue {
				return errTooLarge
			}
			writes = append(writes, pendingWrite{kind: kindSet, key: op.Key, off: size, value: op.Value})
			size += recordSize(len(op.Key), len(op.Value))
		case storage.Delete:
			w, pending := last(op.Key)
			_, live := s.index[op.Key]
			if (pending && w.kind == kindSet) || (!pending && live) {
				if len(op.Key) > MaxKeyOrValue {
					return errTooLarge
				}
				writes = append(writes, pendingWrite{kind: kindDelete, key: op.Key, off: size})
				size += recordSize(len(op.Key), 0)
			}
		default:
			return fmt.Errorf("queue_storage: unknown operation type %d", op.Type)
		}
	}
	if len(writes) == 0 {
		return nil
	}
	if size > maxGroupPayload {
		return errBatchLarge
	}
	buf := startGroup(s.groupBuffer(groupHeaderSize + size))
	for _, w := range writes {
		buf = appendRecord(buf, w.kind, w.key, w.value)
	}
	finishGroup(buf, len(writes))
	seg, off, err := s.writeGroup(buf)
	s.keepBuffer(buf)
	if err != nil {
		return err
	}
	for i, w := range writes {
		end := size
		if i+1 < len(writes) {
			end = writes[i+1].off
		}
		s.apply(seg, off+groupHeaderSize+int64(w.off), w.kind, w.key, uint32(end-w.off)) //nolint:gosec // a record is at most 2 GiB + 13
	}
	// The batch is written: a failure of the maintenance it started is not the caller's; it
	// is logged, and the next call tries again (rule 11).
	if err := s.maintain(); err != nil {
		s.opts.Logger.Warn("queue_storage: removing or compacting segments failed; trying again at the next write", zap.Error(err))
	}
	return nil
}

// groupBuffer returns an empty buffer of at least n bytes' capacity.
func (s *Store) groupBuffer(n int) []byte {
	if cap(s.buf) >= n {
		return s.buf[:0]
	}
	return make([]byte, 0, n)
}

// keepBuffer keeps buf for the next group unless it is larger than 1 MiB.
func (s *Store) keepBuffer(buf []byte) {
	if cap(buf) <= 1<<20 {
		s.buf = buf[:0]
	}
}

// Get returns the value of key, nil when it is not set.
func (s *Store) Get(key string) ([]byte, error) {
	op := storage.GetOperation(key)
	err := s.Batch(op)
	return op.Value, err
}

// Keys returns the live keys, sorted.
func (s *Store) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.index))
	for k := range s.index {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// maintain removes the sealed segments without live bytes, oldest first, and compacts while
// the sealed segments hold more than twice the live bytes plus a segment (rules 7, 8). Each
// call looks at the segments sealed when it starts, and compacts at most as many times as
// there are segments, so that tombstones copied forward can never keep it going.
func (s *Store) maintain() error {
	var empty []*segment
	for _, seg := range s.segs[:len(s.segs)-1] {
		if seg.live == 0 {
			empty = append(empty, seg)
		}
	}
	for _, seg := range empty {
		if err := s.compact(seg); err != nil {
			return err
		}
	}
	for range len(s.segs) {
		var sealed, live int64
		var lowest *segment
		for _, seg := range s.segs[:len(s.segs)-1] {
			sealed += seg.size
			live += seg.live
			if lowest == nil || seg.live*lowest.size < lowest.live*seg.size {
				lowest = seg
			}
		}
		live += s.active().live
		if lowest == nil || sealed <= 2*live+s.opts.SegmentSize {
			return nil
		}
		if err := s.compact(lowest); err != nil {
			return err
		}
	}
	return nil
}

// olderHasKey reports whether a segment older than seg holds a set record of key.
func (s *Store) olderHasKey(seg *segment, key string) bool {
	for _, o := range s.segs {
		if o.id >= seg.id {
			return false
		}
		if _, ok := o.setKeys[key]; ok {
			return true
		}
	}
	return false
}

// compact copies seg's live set records and needed tombstones to the active segment and
// removes seg (rules 7, 8).
func (s *Store) compact(seg *segment) error {
	type copied struct {
		kind byte
		key  string
		off  int
		n    int
	}
	var recs []copied
	buf := startGroup(s.groupBuffer(0))
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		finishGroup(buf, len(recs))
		to, off, err := s.writeGroup(buf)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if r.kind == kindDelete {
				// The key is not live (that is why the tombstone is copied): apply would
				// not record it.
				to.tombKeys[r.key] = struct{}{}
				continue
			}
			s.apply(to, off+groupHeaderSize+int64(r.off), r.kind, r.key, uint32(r.n)) //nolint:gosec // a record is at most 2 GiB + 13
		}
		recs = recs[:0]
		buf = startGroup(buf[:0])
		return nil
	}
	add := func(kind byte, key string, rec []byte) error {
		if len(recs) > 0 && int64(len(buf)+len(rec)) > s.opts.SegmentSize {
			if err := flush(); err != nil {
				return err
			}
		}
		recs = append(recs, copied{kind: kind, key: key, off: len(buf) - groupHeaderSize, n: len(rec)})
		buf = append(buf, rec...)
		return nil
	}
	keys := make([]string, 0, len(seg.setKeys))
	for key := range seg.setKeys {
		if l, ok := s.index[key]; ok && l.seg == seg {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(s.index[a].off, s.index[b].off) })
	for _, key := range keys {
		_, b, err := s.readRecord(key, s.index[key])
		if err != nil {
			// The value is lost: counted by readRecord, logged here, dropped from the index,
			// and an older value of the key must not come back at recovery.
			s.opts.Logger.Warn("queue_storage: dropping a value that cannot be read back for compaction", zap.Error(err))
			s.unlive(key)
			if s.olderHasKey(seg, key) {
				if err := add(kindDelete, key, appendRecord(nil, kindDelete, key, nil)); err != nil {
					return err
				}
			}
			continue
		}
		if err := add(kindSet, key, b); err != nil {
			return err
		}
	}
	for key := range seg.tombKeys {
		if _, live := s.index[key]; live || !s.olderHasKey(seg, key) {
			continue
		}
		if err := add(kindDelete, key, appendRecord(nil, kindDelete, key, nil)); err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	s.keepBuffer(buf)
	if len(keys) > 0 {
		s.opts.Metrics.Compaction()
	}
	return s.remove(seg)
}

// remove unlinks a sealed segment that holds nothing needed any more and forgets it; when
// the unlink fails, the segment stays (an empty one is tried again at the next maintenance).
func (s *Store) remove(seg *segment) error {
	if err := os.Remove(seg.path); err != nil && !errors.Is(err, fs.ErrNotExist) { //nolint:gosec // G703: a segment name of our own in the client's directory
		return fmt.Errorf("queue_storage: removing %s: %w", seg.path, err)
	}
	i := slices.Index(s.segs, seg)
	s.segs = slices.Delete(s.segs, i, i+1)
	s.opts.Metrics.Segments(-1)
	_ = seg.f.Close()
	if s.opts.Fsync {
		return syncDir(s.dir)
	}
	return nil
}

// Close closes the files; later calls return ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var live int64
	for _, seg := range s.segs {
		live += seg.live
	}
	s.opts.Metrics.LiveBytes(-live)
	s.opts.Metrics.Segments(-int64(len(s.segs)))
	return s.closeFiles()
}

func (s *Store) closeFiles() error {
	var errs []error
	for _, seg := range s.segs {
		errs = append(errs, seg.f.Close())
	}
	s.segs = nil
	if s.lock != nil {
		errs = append(errs, unlockDir(s.lock))
		s.lock = nil
	}
	return errors.Join(errs...)
}

func syncDir(dir string) error {
	d, err := os.Open(dir) //nolint:gosec // G703: the client's directory, from the configuration and escaped names
	if err != nil {
		return fmt.Errorf("queue_storage: flushing %s: %w", dir, err)
	}
	err = d.Sync()
	if cErr := d.Close(); err == nil {
		err = cErr
	}
	if err != nil {
		return fmt.Errorf("queue_storage: flushing %s: %w", dir, err)
	}
	return nil
}

// Stats is a snapshot of the log's accounting, for tests and benchmarks.
type Stats struct {
	Segments  int
	LiveBytes int64
	FileBytes int64
	Keys      int
}

// Stats returns the current accounting.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Segments: len(s.segs), Keys: len(s.index)}
	for _, seg := range s.segs {
		st.LiveBytes += seg.live
		st.FileBytes += seg.size
	}
	return st
}

type nopMetrics struct{}

func (nopMetrics) BytesWritten(int64)    {}
func (nopMetrics) BytesRead(int64)       {}
func (nopMetrics) Segments(int64)        {}
func (nopMetrics) LiveBytes(int64)       {}
func (nopMetrics) Compaction()           {}
func (nopMetrics) RecoveryDropped(int64) {}
func (nopMetrics) ReadCorrupt()          {}
