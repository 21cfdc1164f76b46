// SPDX-License-Identifier: Apache-2.0

// Package joiner turns the pieces of container log lines into whole entries: it joins partial
// pieces per stream, bounds entry size, repairs invalid UTF-8, and optionally recombines
// multi-line records. It keeps its state per stream, so interleaved stdout and stderr never mix,
// and can save and restore that state for checkpoints.
package joiner

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"
)

// Flags describe how an entry differs from what the container wrote.
type Flags uint8

// Entry flags.
const (
	// Truncated: the entry was longer than the maximum size; its tail was discarded.
	Truncated Flags = 1 << iota
	// Flushed: the entry's last piece had not arrived within the flush timeout.
	Flushed
	// InvalidUTF8: invalid bytes were replaced with U+FFFD.
	InvalidUTF8
	// Continued: a multi-line record continues the previous record of its stream, which
	// reached the maximum size (records are split there, never cut).
	Continued
)

// Streams are numbered 0 and 1 (stdout and stderr); the joiner does not interpret them.
const numStreams = 2

// Entry is one finished log entry. Its slices are valid only during the emit callback.
type Entry struct {
	Time    int64
	Stream  int
	Tags    []byte
	Content []byte
	Flags   Flags
	// Pieces is the number of physical lines joined into this entry (1: not joined).
	Pieces int
	// Dropped is the number of bytes discarded by truncation.
	Dropped int
	// from is the offset (see Mark) of the entry's first piece.
	from int64
}

// Config configures a Joiner.
type Config struct {
	// MaxLogSize bounds an entry's content in bytes. It must be positive.
	MaxLogSize int
	// IsStart, when set, enables multi-line recombination: an entry for which it returns false
	// is appended (after a newline) to the previous entry of the same stream.
	IsStart func(content []byte) bool
	// Traces turns on the stack-trace rules (design.md, "Stack traces"). IsStart, if set, then
	// opens records of its own that every other entry continues, except one starting a trace.
	Traces bool
}

// Joiner joins pieces. The zero value is not usable; use New.
//
// A stream's state is allocated when it first holds an unfinished entry (a partial piece, or any
// entry with multi-line recombination on) and released by Release once nothing is pending: a
// file that only ever gets whole lines, or has been quiet since its last unfinished one, holds
// no per-stream state or buffers.
type Joiner struct {
	cfg Config
	s   [numStreams]*stream
	// cur is the offset of the piece being added (Mark); pending entries remember the offset of
	// their first piece, so a checkpoint can name where to re-read them instead of holding them.
	cur int64
	// Scratch entries, so that emit's pointer does not escape per call: out for joined or
	// whole entries, mout for multi-line records (emitted while out is still in use), tout for
	// a stack trace's tentative blank line.
	out, mout, tout Entry
	fix             []byte // scratch for UTF-8 repair
}

type pending struct {
	active  bool
	time    int64
	last    int64 // read time of the newest piece, for the flush timeout
	pieces  int
	dropped int
	flags   Flags
	tags    []byte
	buf     []byte
	// from is the offset of the first piece, -1 when unknown (a state loaded from elsewhere).
	from int64
}

type stream struct {
	join  pending // partial pieces not yet ended by a full one
	multi pending // multi-line record waiting for its next start
	// expectContinued makes the next entry, if not a start, open a record flagged Continued
	// (set when re-reading a record that continued a full one).
	expectContinued bool
	// ph is the stack-trace phase of the open record and tent a blank line held tentatively
	// after it (Traces only).
	ph   phase
	tent pending
}

// stream returns the state of stream idx, allocating it on first use.
func (j *Joiner) stream(idx int) *stream {
	st := j.s[idx]
	if st == nil {
		st = &stream{join: pending{from: -1}, multi: pending{from: -1}, tent: pending{from: -1}}
		j.s[idx] = st
	}
	return st
}

// Release frees the streams' state and scratch buffers when no entry is pending (a stream about
// to re-read a continued record keeps its state). Callers use it when a file goes quiet: buffers
// grown for long or multi-line entries are not held for the rest of the file's life.
func (j *Joiner) Release() {
	for i, st := range j.s {
		if st != nil && !st.join.active && !st.multi.active && !st.expectContinued {
			j.s[i] = nil
		}
	}
	j.fix = nil
}

// New returns a Joiner.
func New(cfg Config) *Joiner {
	if cfg.MaxLogSize <= 0 {
		cfg.MaxLogSize = 1 << 20
	}
	return &Joiner{cfg: cfg}
}

// Add feeds one piece. now is the read time in nanoseconds (for the flush timeout). Finished
// entries are passed to emit, in order. content may be reused after Add returns.
func (j *Joiner) Add(streamIdx int, time int64, partial bool, tags, content []byte, now int64, emit func(*Entry)) {
	idx := streamIdx & 1
	if st := j.s[idx]; (st == nil || !st.join.active) && !partial {
		// Fast path: a whole entry in one piece.
		e := &j.out
		*e = Entry{Time: time, Stream: idx, Tags: tags, Content: content, Pieces: 1, from: j.cur}
		if len(content) > j.cfg.MaxLogSize {
			e.Content, e.Dropped = cut(content, j.cfg.MaxLogSize)
			e.Flags |= Truncated
		}
		j.finish(idx, e, now, emit)
		return
	}
	st := j.stream(idx)
	p := &st.join
	if !p.active {
		p.start(time, now, tags)
		p.from = j.cur
	}
	p.last = now
	p.pieces++
	p.appendLimited(content, j.cfg.MaxLogSize)
	if partial {
		return
	}
	j.finishJoin(st, idx, 0, now, emit)
}

// Flush emits pending entries whose newest piece was read at least joinTimeout (partial pieces)
// or multiTimeout (multi-line records) nanoseconds before now. Partial entries are flagged
// Flushed; a multi-line record is complete by definition when no continuation arrived. A
// negative timeout flushes everything, as when a file is closed.
func (j *Joiner) Flush(now, joinTimeout, multiTimeout int64, emit func(*Entry)) {
	for i, st := range j.s {
		if st == nil {
			continue
		}
		if st.join.active && (joinTimeout < 0 || now-st.join.last >= joinTimeout) {
			j.finishJoin(st, i, Flushed, now, emit)
		}
		if st.multi.active && (multiTimeout < 0 || now-st.multi.last >= multiTimeout) {
			j.closeRecord(st, i, emit)
		}
	}
}

// Pending reports whether any stream holds an unfinished entry.
func (j *Joiner) Pending() bool {
	for _, st := range j.s {
		if st != nil && (st.join.active || st.multi.active) {
			return true
		}
	}
	return false
}

// Reset discards all pending state (after emitting it with Flush if it must not be lost).
func (j *Joiner) Reset() {
	j.s = [numStreams]*stream{}
}

func (j *Joiner) finishJoin(st *stream, idx int, extra Flags, now int64, emit func(*Entry)) {
	p := &st.join
	e := &j.out
	*e = Entry{Time: p.time, Stream: idx, Tags: p.tags, Content: p.buf, Pieces: p.pieces, Dropped: p.dropped, Flags: p.flags | extra, from: p.from}
	if e.Flags&Truncated != 0 {
		// The byte cut may have split a character: drop its leading bytes.
		n := len(e.Content) - incompleteTail(e.Content)
		e.Dropped += len(e.Content) - n
		e.Content = e.Content[:n]
	}
	j.finish(idx, e, now, emit)
	p.reset()
}

// finish repairs UTF-8 and hands the entry to the multi-line stage or to emit.
func (j *Joiner) finish(idx int, e *Entry, now int64, emit func(*Entry)) {
	if !isValidUTF8(e.Content) {
		j.fix = repairUTF8(j.fix[:0], e.Content)
		e.Content = j.fix
		e.Flags |= InvalidUTF8
		if len(e.Content) > j.cfg.MaxLogSize {
			var d int
			e.Content, d = cut(e.Content, j.cfg.MaxLogSize)
			n := len(e.Content) - incompleteTail(e.Content)
			e.Dropped += d + len(e.Content) - n
			e.Content = e.Content[:n]
			e.Flags |= Truncated
		}
	}
	if j.cfg.Traces {
		j.traceEntry(idx, e, now, emit)
		return
	}
	if j.cfg.IsStart == nil {
		emit(e)
		return
	}
	st := j.stream(idx)
	m := &st.multi
	expectContinued := st.expectContinued
	st.expectContinued = false
	if !j.cfg.IsStart(e.Content) {
		switch {
		case !m.active && expectContinued:
			j.openMulti(m, e, now, Continued)
		case !m.active:
			// Not a start and no record open: the entry is not part of a multi-line record (a
			// container that never writes a start line). It is emitted as it is, at once.
			emit(e)
		default:
			// Appended; a full record is emitted whole and the entry opens a continuation.
			j.appendLine(st, e.Stream, e, now, emit)
		}
		return
	}
	if m.active {
		j.emitMulti(st, e.Stream, emit)
	}
	j.openMulti(m, e, now, 0)
}

func (j *Joiner) openMulti(m *pending, e *Entry, now int64, extra Flags) {
	m.start(e.Time, now, e.Tags)
	m.from = e.from
	m.buf = append(m.buf, e.Content...)
	m.pieces, m.dropped, m.flags = e.Pieces, e.Dropped, e.Flags|extra
}

func (j *Joiner) emitMulti(st *stream, idx int, emit func(*Entry)) {
	m := &st.multi
	e := &j.mout
	*e = Entry{Time: m.time, Stream: idx, Tags: m.tags, Content: m.buf, Pieces: m.pieces, Dropped: m.dropped, Flags: m.flags}
	emit(e)
	m.reset()
}

func (p *pending) start(time, now int64, tags []byte) {
	p.active = true
	p.time = time
	p.last = now
	p.tags = append(p.tags[:0], tags...)
	p.buf = p.buf[:0]
}

func (p *pending) reset() {
	buf, tags := p.buf[:0], p.tags[:0]
	if cap(buf) > 64<<10 {
		buf = nil // do not pin a large entry's buffer for the life of the file
	}
	*p = pending{buf: buf, tags: tags, from: -1}
}

func (p *pending) appendLimited(b []byte, max int) {
	room := max - len(p.buf)
	if len(b) <= room {
		p.buf = append(p.buf, b...)
		return
	}
	if room < 0 {
		room = 0
	}
	p.buf = append(p.buf, b[:room]...)
	p.dropped += len(b) - room
	p.flags |= Truncated
}

// cut returns b cut to max bytes and the number of bytes cut off.
func cut(b []byte, max int) ([]byte, int) {
	head := b[:max]
	n := len(head) - incompleteTail(head)
	return b[:n], len(b) - n
}

// incompleteTail returns how many trailing bytes of b are the beginning of a UTF-8 sequence that
// was cut off (0 when b ends on a character boundary or with invalid bytes).
func incompleteTail(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

func isValidUTF8(b []byte) bool {
	// ASCII fast path, eight bytes at a time.
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			return utf8.Valid(b[i:])
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 {
			return utf8.Valid(b[i:])
		}
	}
	return true
}

// AppendValidUTF8 appends b to dst, replacing every invalid byte with U+FFFD, and reports
// whether b was already valid.
func AppendValidUTF8(dst, b []byte) ([]byte, bool) {
	if isValidUTF8(b) {
		return append(dst, b...), true
	}
	return repairUTF8(dst, b), false
}

// repairUTF8 appends b to dst with every invalid byte replaced by U+FFFD, so that no byte of
// the original is silently merged away.
func repairUTF8(dst, b []byte) []byte {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			dst = append(dst, "\uFFFD"...)
			b = b[1:]
			continue
		}
		dst = append(dst, b[:size]...)
		b = b[size:]
	}
	return dst
}

// KlogStart reports whether b begins with a klog header "Lmmdd hh:mm:ss.uuuuuu " where L is
// one of I, W, E, F. It is the built-in "klog" multi-line preset.
func KlogStart(b []byte) bool {
	if len(b) < 22 {
		return false
	}
	switch b[0] {
	case 'I', 'W', 'E', 'F':
	default:
		return false
	}
	return dig(b[1:5]) && b[5] == ' ' && dig(b[6:8]) && b[8] == ':' && dig(b[9:11]) &&
		b[11] == ':' && dig(b[12:14]) && b[14] == '.' && dig(b[15:21]) && b[21] == ' '
}

func dig(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Mark sets the offset of the pieces added next (the offset of their line in the file).
func (j *Joiner) Mark(off int64) { j.cur = off }

// Replay describes where the pending entries of a joiner can be re-read from.
type Replay struct {
	// From is, per stream, the offset of the first piece of its oldest pending entry; -1 when
	// the stream has nothing pending.
	From [numStreams]int64
	// Continued marks streams whose pending record continues a full one (see Continued).
	Continued [numStreams]bool
	// Bytes is the size of the pending content.
	Bytes int
	// OK is false when a pending entry has pieces of unknown offset (loaded from a state, such
	// as pieces handed over from a rotated file): it cannot be re-read from this file.
	OK bool
}

// Replay reports where the pending entries can be re-read from.
func (j *Joiner) Replay() Replay {
	r := Replay{OK: true}
	for i, st := range j.s {
		r.From[i] = -1
		if st == nil {
			continue
		}
		for _, p := range []*pending{&st.multi, &st.tent, &st.join} {
			if !p.active {
				continue
			}
			r.Bytes += len(p.buf)
			if p.from < 0 {
				r.OK = false
			}
			if r.From[i] < 0 || p.from < r.From[i] {
				r.From[i] = p.from
			}
		}
		r.Continued[i] = st.multi.active && st.multi.flags&Continued != 0
	}
	return r
}

// ExpectContinued prepares stream to re-read a record that continued a full one: its next
// entry, if not a start, opens a record flagged Continued.
func (j *Joiner) ExpectContinued(streamIdx int) { j.stream(streamIdx & 1).expectContinued = true }

// ErrState reports a saved state that cannot be decoded.
var ErrState = errors.New("joiner: corrupt saved state")

// stateVersion 2 adds, per stream, the stack-trace phase and the tentative blank line;
// version 1 (neither) still loads.
const stateVersion = 2

// AppendState appends the joiner's pending state to dst in a compact binary form.
func (j *Joiner) AppendState(dst []byte) []byte {
	dst = append(dst, stateVersion)
	for _, st := range j.s {
		if st == nil {
			dst = append(dst, 0, 0, byte(phNone), 0) // nothing pending
			continue
		}
		dst = st.join.appendState(dst)
		dst = st.multi.appendState(dst)
		dst = append(dst, byte(st.ph))
		dst = st.tent.appendState(dst)
	}
	return dst
}

// LoadState restores state saved by AppendState.
func (j *Joiner) LoadState(b []byte) error {
	if len(b) == 0 {
		j.Reset()
		return nil
	}
	version := b[0]
	if version != 1 && version != stateVersion {
		return ErrState
	}
	b = b[1:]
	var err error
	for i := range j.s {
		st := j.stream(i)
		if b, err = st.join.loadState(b); err != nil {
			return err
		}
		if b, err = st.multi.loadState(b); err != nil {
			return err
		}
		st.ph = phNone
		st.tent.reset()
		if version == 1 {
			continue
		}
		if len(b) == 0 || phase(b[0]) >= numPhases {
			return ErrState
		}
		st.ph, b = phase(b[0]), b[1:]
		if b, err = st.tent.loadState(b); err != nil {
			return err
		}
		if (st.tent.active || st.ph != phNone) && !st.multi.active {
			return ErrState
		}
	}
	if len(b) != 0 {
		return ErrState
	}
	return nil
}

func (p *pending) appendState(dst []byte) []byte {
	if !p.active {
		return append(dst, 0)
	}
	dst = append(dst, 1, byte(p.flags))
	dst = binary.AppendVarint(dst, p.time)
	dst = binary.AppendVarint(dst, p.last)
	dst = binary.AppendUvarint(dst, uint64(p.pieces))  //nolint:gosec // a count of pieces, never negative
	dst = binary.AppendUvarint(dst, uint64(p.dropped)) //nolint:gosec // a count of dropped bytes, never negative
	dst = binary.AppendUvarint(dst, uint64(len(p.tags)))
	dst = append(dst, p.tags...)
	dst = binary.AppendUvarint(dst, uint64(len(p.buf)))
	return append(dst, p.buf...)
}

func (p *pending) loadState(b []byte) ([]byte, error) {
	p.reset()
	if len(b) == 0 {
		return nil, ErrState
	}
	if b[0] == 0 {
		return b[1:], nil
	}
	if b[0] != 1 || len(b) < 2 {
		return nil, ErrState
	}
	p.active, p.flags = true, Flags(b[1])
	b = b[2:]
	var ok bool
	var u uint64
	if p.time, b, ok = varint(b); !ok {
		return nil, ErrState
	}
	if p.last, b, ok = varint(b); !ok {
		return nil, ErrState
	}
	if u, b, ok = uvarint(b); !ok || u > 1<<31 {
		return nil, ErrState
	}
	p.pieces = int(u)
	if u, b, ok = uvarint(b); !ok || u > 1<<40 {
		return nil, ErrState
	}
	p.dropped = int(u)
	if u, b, ok = uvarint(b); !ok || u > uint64(len(b)) {
		return nil, ErrState
	}
	p.tags = append(p.tags[:0], b[:u]...)
	b = b[u:]
	if u, b, ok = uvarint(b); !ok || u > uint64(len(b)) {
		return nil, ErrState
	}
	p.buf = append(p.buf[:0], b[:u]...)
	return b[u:], nil
}

func varint(b []byte) (int64, []byte, bool) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, nil, false
	}
	return v, b[n:], true
}

func uvarint(b []byte) (uint64, []byte, bool) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, false
	}
	return v, b[n:], true
}
