// SPDX-License-Identifier: Apache-2.0

// Package tracker follows container log files: it finds them, identifies them across renames and
// restarts, reads them through open descriptors, and turns their lines into records. It has no
// collector dependencies; the receiver decides when read state becomes durable.
package tracker

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/criline"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/joiner"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/podpath"
)

// FileID is a file's device and inode.
type FileID struct {
	Dev, Ino uint64
}

func (id FileID) String() string { return fmt.Sprintf("%d.%d", id.Dev, id.Ino) }

// Fingerprint is the length and FNV-1a hash of a file's first bytes.
type Fingerprint struct {
	Len  int
	Hash uint64
}

// Format is a file's line format.
type Format uint8

// Formats. Unknown until the first line is seen.
const (
	FormatUnknown Format = iota
	FormatCRI
	FormatDocker
)

// RecordFlags extend joiner.Flags with reader-level conditions.
type RecordFlags = joiner.Flags

// Record flags set by the reader in addition to the joiner's.
const (
	// ParseError: the line is not CRI nor Docker json-file; Body is the raw line.
	ParseError RecordFlags = 1 << 6
	// Unterminated: the file ended without a newline after this line's bytes.
	Unterminated RecordFlags = 1 << 7
)

// Record is one log record produced by a reader. Slices are valid only during the sink call.
type Record struct {
	Time    int64 // runtime timestamp, ns; 0 for unparsable lines
	Stream  criline.Stream
	Tags    []byte
	Body    []byte // valid UTF-8
	Flags   RecordFlags
	Pieces  int
	Dropped int
}

// Stats counts what readers did. The receiver turns deltas into telemetry.
type Stats struct {
	Lines, Bytes, Records                      int64
	ParseErrors, Joins, Truncations, Flushes   int64
	InvalidUTF8, DroppedBytes, CopyTruncations int64
	LongLines                                  int64
	// ResumeFailures counts rotated files found at a restart that could not be read.
	ResumeFailures int64
	// Rotations counts open files found no longer at a matched path (rotated or deleted).
	Rotations int64
}

// ReadConfig holds the reader settings shared by all files.
type ReadConfig struct {
	FingerprintSize int
	MaxLogSize      int
	MaxBytesPerRead int
	// FlushTimeout and MultilineFlushTimeout are in nanoseconds.
	FlushTimeout          int64
	MultilineFlushTimeout int64
	IsStart               func([]byte) bool
	// Traces turns on the stack-trace rules (with IsStart, if set, for klog records).
	Traces bool
	// MultilineInclude limits IsStart and Traces to files whose path matches one of these
	// globs; empty: every file.
	MultilineInclude []string
}

// joinerConfig returns the joiner configuration of the file at path: without multi-line
// recombination when it does not apply to the file.
func (c *ReadConfig) joinerConfig(path string) joiner.Config {
	jc := joiner.Config{MaxLogSize: c.MaxLogSize, IsStart: c.IsStart, Traces: c.Traces}
	if (c.IsStart == nil && !c.Traces) || len(c.MultilineInclude) == 0 {
		return jc
	}
	for _, g := range c.MultilineInclude {
		if ok, _ := filepath.Match(g, path); ok {
			return jc
		}
	}
	return joiner.Config{MaxLogSize: c.MaxLogSize}
}

// maxLine is the longest physical line kept whole; longer lines are cut and flagged.
func (c *ReadConfig) maxLine() int { return c.MaxLogSize + 64<<10 }

// Reader reads one file.
type Reader struct {
	Path   string
	Meta   podpath.Meta
	MetaOK bool
	ID     FileID

	f        *os.File
	fd       int
	fp       Fingerprint
	offset   int64
	format   Format
	skipping bool
	j        *joiner.Joiner
	cfg      *ReadConfig
	docker   criline.DockerParser
	line     criline.Line
	rec      Record
	scratch  []byte
	sink     func(*Record)
	stats    *Stats
	// large is the tracker's buffer for a line longer than one turn's read, made when first
	// needed (largeBuffer).
	large    *[]byte
	emitFunc func(*joiner.Entry)
	// pendingExtra flags the entry finished by the line being processed.
	pendingExtra RecordFlags
	// lineOff is the offset of the line being processed.
	lineOff int64
	// A reader resumed from a checkpoint that names where its unfinished entries start re-reads
	// the file from there up to replayUntil (the checkpoint's offset), feeding only the lines of
	// those entries: per stream, from replayFrom on (-1: none). resumed is that checkpoint, saved
	// again as it is until the re-read is done.
	replayUntil int64
	replayFrom  [2]int64
	resumed     *State

	// Draining is set when the file is no longer at a matched path (rotated or deleted).
	Draining bool
	// Successor is the next file at the same path (the new file after a rotation); HeldBy is
	// the previous one. A held reader is not read until its predecessor is done, and then
	// takes over the predecessor's unfinished entries: an entry split across a rotation is one
	// record, in order.
	Successor, HeldBy *Reader
	// started is set by the first Read.
	started bool
	// rotatedAs is the rotated name a file was found under at a restart ("" otherwise).
	rotatedAs string
	// gz is set for a compressed rotated file, read through a decompressing stream.
	gz *gzSource
	// LastGrowth is when the reader last found new bytes (ns).
	LastGrowth int64
	// Key is the storage key of the checkpoint this reader resumed ("" for a new file).
	Key string
	// Size is the file size at the last look.
	Size int64
}

// Offset returns the offset up to which the file has been read.
func (r *Reader) Offset() int64 { return r.offset }

// Settled reports that r has nothing to do until its file grows: a current file (not draining,
// not part of a rotation chain, not compressed) read to its end, holding no unfinished entry
// (which a flush timeout would finish).
func (r *Reader) Settled() bool {
	return !r.Draining && r.Successor == nil && r.HeldBy == nil && r.gz == nil &&
		r.offset == r.Size && r.replayUntil == 0 && !r.j.Pending() && !r.skipping
}

// Release frees what a settled reader holds only for reading: the joiner's per-stream state
// and buffers, and the scratch buffers of unparsable lines and of the docker format. They are
// allocated again at the next read that needs them.
func (r *Reader) Release() {
	r.j.Release()
	r.scratch = nil
	r.docker = criline.DockerParser{}
}

// File returns the open file, for watching it.
func (r *Reader) File() *os.File { return r.f }

// Close closes the file descriptor.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	if r.gz != nil {
		r.gz.release()
	}
	err := r.f.Close()
	r.f = nil
	return err
}

func newReader(path string, f *os.File, id FileID, cfg *ReadConfig, stats *Stats, large *[]byte) *Reader {
	meta, ok := podpath.Parse(path)
	r := &Reader{Path: path, Meta: meta, MetaOK: ok, ID: id, f: f, fd: int(f.Fd()), cfg: cfg, stats: stats, large: large, //nolint:gosec // descriptors fit in int

		j: joiner.New(cfg.joinerConfig(path))}
	r.emitFunc = r.emitEntry
	return r
}

// fingerprintOf hashes the first n bytes of f.
func fingerprintOf(f *os.File, n int, buf []byte) (Fingerprint, error) {
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	got, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Fingerprint{}, err
	}
	h := fnv.New64a()
	_, _ = h.Write(buf[:got])
	return Fingerprint{Len: got, Hash: h.Sum64()}, nil
}

// Read reads new bytes, at most cfg.MaxBytesPerRead of complete lines, and passes finished
// records to sink. buf is a scratch buffer shared by all readers. When close is set the caller
// wants to let the file go: if no new bytes arrived, everything pending (including an
// unterminated last line) is emitted and done is reported; the caller closes the reader once
// the records are consumed. changed reports that the offset or pending state moved.
func (r *Reader) Read(now int64, buf []byte, close bool, sink func(*Record)) (changed, done bool, err error) {
	if r.HeldBy != nil {
		return false, false, nil // its predecessor at the same path comes first
	}
	r.sink = sink
	r.started = true
	defer func() { r.sink = nil }()
	size, err := r.size()
	if err != nil {
		return false, false, err
	}
	if size != r.Size {
		close = false // the file changed since the caller decided: it is not quiet
		r.LastGrowth = now
	}
	r.Size = size
	truncated := false
	if r.gz == nil { // a compressed file never changes
		truncated, err = r.checkIdentity(size, buf)
	}
	if err != nil {
		return false, false, err
	}
	changed = truncated
	if size > r.offset {
		n, err := r.readLines(now, size, buf, close)
		if err != nil {
			return changed, false, err
		}
		changed = changed || n > 0
	}
	if close && r.offset >= size {
		changed = changed || r.j.Pending()
		if !r.handOver() {
			r.j.Flush(now, -1, -1, r.emitFunc)
		}
		return changed, true, nil
	}
	if r.offset >= size && r.j.Pending() {
		r.j.Flush(now, r.cfg.FlushTimeout, r.cfg.MultilineFlushTimeout, r.emitFunc)
		changed = changed || !r.j.Pending()
	}
	return changed, false, nil
}

func (r *Reader) size() (int64, error) {
	if r.gz != nil {
		return r.gz.size, nil
	}
	var st syscall.Stat_t // does not escape: no allocation
	if err := syscall.Fstat(r.fd, &st); err != nil {
		return 0, err
	}
	return st.Size, nil
}

// checkIdentity detects copytruncate (the file shrank below our offset, or its first bytes
// changed) and keeps growing the fingerprint of a short file.
func (r *Reader) checkIdentity(size int64, buf []byte) (bool, error) {
	if size < r.offset {
		r.restartAfterTruncate()
		return true, nil
	}
	if size == r.offset && int64(r.fp.Len) >= min(size, int64(r.cfg.FingerprintSize)) {
		return false, nil // nothing new and the fingerprint is complete: an idle file costs one fstat
	}
	want := min(int64(r.cfg.FingerprintSize), size)
	if r.fp.Len > 0 {
		fp, err := fingerprintOf(r.f, r.fp.Len, buf)
		if err != nil {
			return false, err
		}
		if fp != r.fp {
			r.restartAfterTruncate()
			return true, nil
		}
	}
	if int64(r.fp.Len) < want {
		fp, err := fingerprintOf(r.f, int(want), buf)
		if err != nil {
			return false, err
		}
		r.fp = fp
	}
	return false, nil
}

// handOver moves the unfinished entries of a finished file to its successor, which continues
// them with its first lines. It reports false when there is no successor able to take them
// (none, or one that has already read or restored state of its own).
func (r *Reader) handOver() bool {
	s := r.Successor
	if s == nil || !r.j.Pending() || s.started || s.offset != 0 || s.j.Pending() {
		return false
	}
	if err := s.j.LoadState(r.j.AppendState(nil)); err != nil {
		return false
	}
	r.j.Reset()
	return true
}

func (r *Reader) restartAfterTruncate() {
	r.stats.CopyTruncations++
	r.j.Flush(0, -1, -1, r.emitFunc)
	r.offset = 0
	r.fp = Fingerprint{}
	r.skipping = false
	r.replayUntil, r.resumed = 0, nil
}

// readLines reads from the offset and processes complete lines. It returns the bytes consumed.
func (r *Reader) readLines(now int64, size int64, buf []byte, final bool) (int, error) {
	// Read one turn's worth; only a line longer than that needs the whole buffer.
	remaining := size - r.offset
	data, err := r.readAt(buf[:min(remaining, int64(r.cfg.MaxBytesPerRead))])
	if err != nil {
		return 0, err
	}
	if !r.skipping && int64(len(data)) < remaining && bytes.IndexByte(data, '\n') < 0 {
		buf = r.largeBuffer()
		if data, err = r.readAt(buf[:min(remaining, int64(len(buf)))]); err != nil {
			return 0, err
		}
	}
	// A truncation between the identity check and the read would hand us new content at a
	// stale offset. If the first bytes are still the same after the read, what we read is
	// valid. The fingerprint is hashed into the spare end of buf, past the data.
	if r.gz == nil && r.fp.Len > 0 && len(buf)-len(data) >= r.fp.Len {
		fp, err := fingerprintOf(r.f, r.fp.Len, buf[len(data):])
		if err != nil {
			return 0, err
		}
		if fp != r.fp {
			r.restartAfterTruncate()
			return 0, nil
		}
	}
	consumed := 0
	for consumed < len(data) && consumed < r.cfg.MaxBytesPerRead {
		rest := data[consumed:]
		nl := bytes.IndexByte(rest, '\n')
		if r.skipping {
			if nl < 0 {
				r.stats.DroppedBytes += int64(len(rest))
				consumed += len(rest)
				break
			}
			r.stats.DroppedBytes += int64(nl)
			consumed += nl + 1
			r.skipping = false
			continue
		}
		if nl < 0 {
			switch {
			case len(rest) >= r.cfg.maxLine():
				// A physical line too long to keep whole: keep its head, skip to its end.
				r.stats.LongLines++
				r.lineOff = r.offset + int64(consumed)
				r.processLine(now, rest[:r.cfg.maxLine()], joiner.Truncated)
				r.stats.DroppedBytes += int64(len(rest) - r.cfg.maxLine())
				consumed += len(rest)
				r.skipping = true
			case final && r.offset+int64(consumed+len(rest)) >= size:
				// The file ends without a newline and will not grow any more.
				r.lineOff = r.offset + int64(consumed)
				r.processLine(now, rest, Unterminated)
				consumed += len(rest)
			}
			break
		}
		r.lineOff = r.offset + int64(consumed)
		r.processLine(now, rest[:nl], 0)
		consumed += nl + 1
	}
	fresh := int64(consumed)
	if r.replayUntil > r.offset {
		fresh -= min(fresh, r.replayUntil-r.offset) // re-read bytes were counted before the stop
	}
	r.offset += int64(consumed)
	r.stats.Bytes += fresh
	if r.replayUntil > 0 && r.offset >= r.replayUntil {
		r.replayUntil, r.resumed = 0, nil
	}
	return consumed, nil
}

// largeBuffer returns the buffer for a line longer than one turn's read: room for the
// longest line kept whole. The tracker makes it the first time a reader needs it and keeps
// it; node agents whose pods never write such a line never hold it.
func (r *Reader) largeBuffer() []byte {
	if *r.large == nil {
		*r.large = make([]byte, max(r.cfg.MaxBytesPerRead, r.cfg.maxLine())+1)
	}
	return *r.large
}

func (r *Reader) readAt(b []byte) ([]byte, error) {
	var n int
	var err error
	if r.gz != nil {
		n, err = r.gz.ReadAt(b, r.offset)
	} else {
		n, err = r.f.ReadAt(b, r.offset)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

func (r *Reader) processLine(now int64, line []byte, extra RecordFlags) {
	replaying := r.lineOff < r.replayUntil
	if !replaying {
		r.stats.Lines++
	}
	if r.format == FormatUnknown && len(line) > 0 {
		r.format = FormatCRI
		if line[0] == '{' {
			r.format = FormatDocker
		}
	}
	l := &r.line
	var err error
	if r.format == FormatDocker {
		if err = r.docker.Parse(line, l); err != nil {
			err = criline.ParseCRI(line, l)
		}
	} else if err = criline.ParseCRI(line, l); err != nil {
		err = r.docker.Parse(line, l)
	}
	if replaying {
		// Re-reading up to the checkpoint: only the lines of the entries unfinished at the
		// checkpoint are fed again; everything else was emitted before the stop.
		if err != nil {
			return
		}
		if from := r.replayFrom[(l.Stream-1)&1]; from < 0 || r.lineOff < from {
			return
		}
	}
	if err != nil {
		r.stats.ParseErrors++
		rec := &r.rec
		dropped := 0
		if len(line) > r.cfg.MaxLogSize {
			dropped = len(line) - r.cfg.MaxLogSize
			line = line[:r.cfg.MaxLogSize]
			extra |= joiner.Truncated
		}
		var valid bool
		r.scratch, valid = joiner.AppendValidUTF8(r.scratch[:0], line)
		*rec = Record{Body: r.scratch, Flags: ParseError | extra, Pieces: 1, Dropped: dropped}
		if !valid {
			rec.Flags |= joiner.InvalidUTF8
			r.stats.InvalidUTF8++
		}
		if extra&joiner.Truncated != 0 {
			r.stats.Truncations++
			r.stats.DroppedBytes += int64(dropped)
		}
		r.stats.Records++
		r.sink(rec)
		return
	}
	if extra != 0 {
		// A cut or unterminated line: its entry ends here whatever its tag said, flagged.
		l.Partial = false
		r.pendingExtra = extra
	}
	r.j.Mark(r.lineOff)
	r.j.Add(int(l.Stream-1), l.Time, l.Partial, l.Tags, l.Content, now, r.emitFunc)
	r.pendingExtra = 0
}

func (r *Reader) emitEntry(e *joiner.Entry) {
	rec := &r.rec
	*rec = Record{
		Time: e.Time, Stream: criline.Stream(e.Stream + 1), Tags: e.Tags, Body: e.Content, //nolint:gosec // the joiner's stream index is 0 or 1
		Flags: e.Flags | r.pendingExtra, Pieces: e.Pieces, Dropped: e.Dropped,
	}
	s := r.stats
	s.Records++
	if e.Pieces > 1 {
		s.Joins++
	}
	if rec.Flags&joiner.Truncated != 0 {
		s.Truncations++
	}
	if e.Flags&joiner.Flushed != 0 {
		s.Flushes++
	}
	if e.Flags&joiner.InvalidUTF8 != 0 {
		s.InvalidUTF8++
	}
	s.DroppedBytes += int64(e.Dropped)
	r.sink(rec)
}

// State is a reader's durable state.
type State struct {
	ID       FileID
	Path     string
	FP       Fingerprint
	Offset   int64
	Format   Format
	Skipping bool
	Joiner   []byte
	// Replay, when set (one offset per stream, -1: nothing pending), replaces Joiner: the
	// unfinished entries are re-read from the file at these offsets instead of being stored.
	// ReplayContinued marks streams whose unfinished record continues a full one.
	Replay          []int64
	ReplayContinued [2]bool
	// Key is the storage key the state was loaded from (not encoded; set by the loader). A
	// resumed reader keeps it, so a checkpoint is never written under another file's key.
	Key string
}

// InlineMax is the most pending content a checkpoint holds itself. Beyond it the checkpoint
// holds only where the unfinished entries start, and a restart re-reads them from the file:
// saving costs the same whatever the size of an unfinished entry.
const InlineMax = 4 << 10

// State returns the reader's current state.
func (r *Reader) State() State {
	if r.replayUntil > r.offset {
		return *r.resumed // still re-reading up to the checkpoint it resumed: that one holds
	}
	s := State{
		ID: r.ID, Path: r.Path, FP: r.fp, Offset: r.offset, Format: r.format, Skipping: r.skipping,
	}
	// A compressed file is re-read through a new stream at a restart: offsets are as good there.
	if rp := r.j.Replay(); rp.OK && rp.Bytes > InlineMax {
		s.Replay = []int64{rp.From[0], rp.From[1]}
		s.ReplayContinued = rp.Continued
		return s
	}
	s.Joiner = r.j.AppendState(nil)
	return s
}

// restore applies a saved state.
func (r *Reader) restore(s State) error {
	if err := r.j.LoadState(s.Joiner); err != nil {
		return err
	}
	r.fp, r.offset, r.format, r.skipping = s.FP, s.Offset, s.Format, s.Skipping
	r.Key = s.Key
	if len(s.Replay) == 2 {
		start := s.Offset
		for i, from := range s.Replay {
			if from >= 0 && from < start {
				start = from
			}
			if s.ReplayContinued[i] {
				r.j.ExpectContinued(i)
			}
		}
		r.replayFrom = [2]int64{s.Replay[0], s.Replay[1]}
		r.replayUntil = s.Offset
		r.resumed = &s
		// Lines start at the offsets saved: no line is being skipped there.
		r.offset, r.skipping = start, false
	}
	return nil
}

const stateVersion = 2

// MarshalState encodes s.
func MarshalState(s State) []byte {
	b := make([]byte, 0, 64+len(s.Path)+len(s.Joiner))
	b = append(b, stateVersion, byte(s.Format))
	if s.Skipping {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, s.ID.Dev)
	b = binary.AppendUvarint(b, s.ID.Ino)
	b = binary.AppendUvarint(b, uint64(s.FP.Len)) //nolint:gosec // a length, never negative
	b = binary.LittleEndian.AppendUint64(b, s.FP.Hash)
	b = binary.AppendUvarint(b, uint64(s.Offset)) //nolint:gosec // a file offset, never negative
	b = binary.AppendUvarint(b, uint64(len(s.Path)))
	b = append(b, s.Path...)
	if len(s.Replay) == 2 {
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(s.Replay[0]+1)) //nolint:gosec // an offset or -1
		b = binary.AppendUvarint(b, uint64(s.Replay[1]+1)) //nolint:gosec // an offset or -1
		var cont byte
		for i, c := range s.ReplayContinued {
			if c {
				cont |= 1 << i
			}
		}
		return append(b, cont)
	}
	b = append(b, 0)
	return append(b, s.Joiner...)
}

// ErrState reports a stored state that cannot be decoded.
var ErrState = errors.New("tracker: corrupt saved state")

// UnmarshalState decodes a state encoded by MarshalState.
func UnmarshalState(b []byte) (State, error) {
	var s State
	if len(b) < 3 || (b[0] != stateVersion && b[0] != 1) || b[2] > 1 {
		return s, ErrState
	}
	s.Format, s.Skipping = Format(b[1]), b[2] == 1
	version := b[0]
	b = b[3:]
	var vals [3]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return s, ErrState
		}
		vals[i], b = v, b[n:]
	}
	if len(b) < 8 || vals[2] > 1<<20 {
		return s, ErrState
	}
	s.ID = FileID{Dev: vals[0], Ino: vals[1]}
	s.FP = Fingerprint{Len: int(vals[2]), Hash: binary.LittleEndian.Uint64(b)} //nolint:gosec // vals[2] is at most 1<<20 (checked above)
	b = b[8:]
	off, n := binary.Uvarint(b)
	if n <= 0 || off > 1<<62 {
		return s, ErrState
	}
	s.Offset, b = int64(off), b[n:]
	pl, n := binary.Uvarint(b)
	if n <= 0 || pl > uint64(len(b)-n) { //nolint:gosec // a decoded varint is at most len(b) bytes long
		return s, ErrState
	}
	b = b[n:]
	s.Path = string(b[:pl])
	b = b[pl:]
	if version >= 2 {
		if len(b) == 0 || b[0] > 1 {
			return s, ErrState
		}
		replay := b[0] == 1
		b = b[1:]
		if replay {
			s.Replay = make([]int64, 2)
			for i := range s.Replay {
				v, n := binary.Uvarint(b)
				if n <= 0 || v > uint64(s.Offset)+1 { //nolint:gosec // Offset is at most 1<<62
					return s, ErrState
				}
				s.Replay[i], b = int64(v)-1, b[n:] //nolint:gosec // v is at most Offset+1
			}
			if len(b) != 1 || b[0] > 3 {
				return s, ErrState
			}
			s.ReplayContinued = [2]bool{b[0]&1 != 0, b[0]&2 != 0}
			return s, nil
		}
	}
	s.Joiner = append([]byte(nil), b...)
	return s, nil
}
