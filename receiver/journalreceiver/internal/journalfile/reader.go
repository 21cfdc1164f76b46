// SPDX-License-Identifier: Apache-2.0

package journalfile

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

var le = binary.LittleEndian

// ID128 is a 128-bit systemd id (machine, boot, file, seqnum id).
type ID128 [16]byte

// String is the id as 32 lowercase hex digits, as journalctl prints it.
func (id ID128) String() string { return hex.EncodeToString(id[:]) }

// IsZero reports whether the id is all zeros.
func (id ID128) IsZero() bool { return id == ID128{} }

// Header is the part of a journal file header the reader uses.
type Header struct {
	CompatibleFlags    uint32
	IncompatibleFlags  uint32
	State              State
	FileID             ID128
	MachineID          ID128
	TailEntryBootID    ID128
	SeqnumID           ID128
	HeaderSize         uint64
	ArenaSize          uint64
	TailObjectOffset   uint64
	NObjects           uint64
	NEntries           uint64
	TailEntrySeqnum    uint64
	HeadEntrySeqnum    uint64
	EntryArrayOffset   uint64
	HeadEntryRealtime  uint64
	TailEntryRealtime  uint64
	TailEntryMonotonic uint64
}

// Compact reports whether the file uses the compact layout (32-bit offsets in entries and entry
// arrays, a larger DATA object header).
func (h *Header) Compact() bool { return h.IncompatibleFlags&IncompatCompact != 0 }

// Field is one FIELD=value pair of an entry. Value may hold any bytes.
type Field struct {
	Name  string
	Value []byte
}

// Entry is one journal entry.
type Entry struct {
	// Offset is the entry object's offset in the file.
	Offset    uint64
	Seqnum    uint64
	Realtime  uint64 // microseconds since the epoch (__REALTIME_TIMESTAMP)
	Monotonic uint64 // microseconds since boot (__MONOTONIC_TIMESTAMP)
	BootID    ID128
	XorHash   uint64
	// SeqnumID is the file's sequence number id: seqnums are comparable within one SeqnumID.
	SeqnumID ID128
	// Fields are the entry's data items in file order; a name may repeat.
	Fields []Field
	// BadFields counts items that could not be read (bad offset, bad object, failed
	// decompression, no '='): skipped, the rest of the entry kept.
	BadFields int
	// FieldErr is the first item error, when BadFields > 0.
	FieldErr error
}

// Get returns the first value of the named field.
func (e *Entry) Get(name string) ([]byte, bool) {
	for i := range e.Fields {
		if e.Fields[i].Name == name {
			return e.Fields[i].Value, true
		}
	}
	return nil, false
}

// Cursor is the entry's position in journalctl's cursor format.
func (e *Entry) Cursor() string {
	return "s=" + e.SeqnumID.String() + ";i=" + strconv.FormatUint(e.Seqnum, 16) +
		";b=" + e.BootID.String() + ";m=" + strconv.FormatUint(e.Monotonic, 16) +
		";t=" + strconv.FormatUint(e.Realtime, 16) + ";x=" + strconv.FormatUint(e.XorHash, 16)
}

// Source is what a Reader reads: random access and a size that may grow.
type Source interface {
	io.ReaderAt
	Size() (int64, error)
}

type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// BytesSource is a Source over a byte slice.
type BytesSource []byte

// ReadAt implements io.ReaderAt.
func (b BytesSource) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(b).ReadAt(p, off)
}

// Size implements Source.
func (b BytesSource) Size() (int64, error) { return int64(len(b)), nil }

// Reader walks the entries of one journal file in order. It is not safe for concurrent use.
type Reader struct {
	src    Source
	closer io.Closer
	size   uint64
	hdr    Header

	// Walk position (design.md rules 3-5).
	arrayOff  uint64 // current entry array object; 0 before the first
	arrayIdx  uint64 // next item in it
	consumed  uint64 // array items taken
	lastEntry uint64 // offset of the last entry taken; entries must increase
	sticky    error  // a broken chain: nothing after it can be reached

	// MinSeqnum: entries with a smaller seqnum are passed over without reading their fields.
	MinSeqnum uint64

	cache map[uint64]Field // decoded small DATA objects by offset
	buf   []byte
}

// Open opens a journal file for reading.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(osFile{f})
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads the header of src and returns a Reader positioned before the first entry.
func NewReader(src Source) (*Reader, error) {
	r := &Reader{src: src, cache: map[uint64]Field{}}
	if err := r.Refresh(); err != nil {
		return nil, err
	}
	return r, nil
}

// Close closes the underlying file when the Reader opened it.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Header returns the header as last read.
func (r *Reader) Header() Header { return r.hdr }

// Consumed is the number of entry array items walked so far (entries returned or skipped).
func (r *Reader) Consumed() uint64 { return r.consumed }

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// Refresh re-reads the file size and header: a file being appended to has new entries.
func (r *Reader) Refresh() error {
	sz, err := r.src.Size()
	if err != nil {
		return err
	}
	if sz < 0 {
		sz = 0
	}
	r.size = uint64(sz)
	if r.size < headerMinSize {
		return corrupt("file of %d bytes is shorter than a header", r.size)
	}
	var b [headerMinSize]byte
	if err := r.readAt(b[:], 0); err != nil {
		return err
	}
	if string(b[:8]) != Signature {
		return corrupt("bad signature %q", b[:8])
	}
	h := Header{
		CompatibleFlags:   le.Uint32(b[8:]),
		IncompatibleFlags: le.Uint32(b[12:]),
		State:             State(b[16]),
	}
	copy(h.FileID[:], b[24:40])
	copy(h.MachineID[:], b[40:56])
	copy(h.TailEntryBootID[:], b[56:72])
	copy(h.SeqnumID[:], b[72:88])
	h.HeaderSize = le.Uint64(b[88:])
	h.ArenaSize = le.Uint64(b[96:])
	h.TailObjectOffset = le.Uint64(b[136:])
	h.NObjects = le.Uint64(b[144:])
	h.NEntries = le.Uint64(b[152:])
	h.TailEntrySeqnum = le.Uint64(b[160:])
	h.HeadEntrySeqnum = le.Uint64(b[168:])
	h.EntryArrayOffset = le.Uint64(b[176:])
	h.HeadEntryRealtime = le.Uint64(b[184:])
	h.TailEntryRealtime = le.Uint64(b[192:])
	h.TailEntryMonotonic = le.Uint64(b[200:])
	if unknown := h.IncompatibleFlags &^ incompatSupported; unknown != 0 {
		return fmt.Errorf("%w: incompatible flags %#x", ErrUnsupported, unknown)
	}
	if h.HeaderSize < headerMinSize || h.HeaderSize > r.size {
		return corrupt("header size %d outside [%d, file size %d]", h.HeaderSize, headerMinSize, r.size)
	}
	if r.arrayOff != 0 && h.IncompatibleFlags != r.hdr.IncompatibleFlags {
		return corrupt("incompatible flags changed while reading (%#x to %#x)", r.hdr.IncompatibleFlags, h.IncompatibleFlags)
	}
	r.hdr = h
	return nil
}

func (r *Reader) readAt(p []byte, off uint64) error {
	if off > r.size || uint64(len(p)) > r.size-off {
		return corrupt("read of %d bytes at %d beyond the file's %d bytes", len(p), off, r.size)
	}
	n, err := r.src.ReadAt(p, int64(off)) //nolint:gosec // off is checked against the file size before every read
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return corrupt("short read of %d bytes at %d (file truncated?)", len(p), off)
	}
	return err
}

// object reads and checks the header of the object at off and returns its size.
func (r *Reader) object(off uint64, typ uint8, minSize uint64) (size uint64, flags uint8, err error) {
	if off%8 != 0 || off < r.hdr.HeaderSize {
		return 0, 0, corrupt("object offset %d not aligned or inside the header", off)
	}
	var b [objHeaderSize]byte
	if err := r.readAt(b[:], off); err != nil {
		return 0, 0, err
	}
	size = le.Uint64(b[8:])
	if b[0] != typ {
		return 0, 0, corrupt("object at %d has type %d, want %d", off, b[0], typ)
	}
	if size < minSize {
		return 0, 0, corrupt("object at %d of size %d, smaller than %d", off, size, minSize)
	}
	if size > r.size-off {
		return 0, 0, corrupt("object at %d of size %d ends beyond the file's %d bytes", off, size, r.size)
	}
	return size, b[1], nil
}

func (r *Reader) itemSize() uint64 {
	if r.hdr.Compact() {
		return 4
	}
	return 8
}

func (r *Reader) readOffset(off uint64) (uint64, error) {
	var b [8]byte
	n := r.itemSize()
	if err := r.readAt(b[:n], off); err != nil {
		return 0, err
	}
	if n == 4 {
		return uint64(le.Uint32(b[:])), nil
	}
	return le.Uint64(b[:]), nil
}

// Next returns the next entry. io.EOF means no more entries for now: a file being appended to
// may have more after a later call. An error wrapping ErrCorrupt about one entry leaves the
// Reader past it (call Next again); an error about the entry array chain is returned again by
// every later call.
func (r *Reader) Next() (*Entry, error) {
	for {
		off, err := r.nextOffset()
		if err != nil {
			return nil, err
		}
		e, skip, err := r.entry(off)
		if err != nil {
			return nil, fmt.Errorf("entry at %d: %w", off, err)
		}
		if !skip {
			return e, nil
		}
	}
}

// nextOffset advances through the entry array chain to the next entry's offset.
func (r *Reader) nextOffset() (uint64, error) {
	if r.sticky != nil {
		return 0, r.sticky
	}
	if r.consumed >= r.hdr.NEntries {
		if err := r.Refresh(); err != nil {
			return 0, err
		}
		if r.consumed >= r.hdr.NEntries {
			return 0, io.EOF
		}
	}
	if r.arrayOff == 0 {
		if r.hdr.EntryArrayOffset == 0 {
			return 0, io.EOF
		}
		r.arrayOff, r.arrayIdx = r.hdr.EntryArrayOffset, 0
	}
	isz := r.itemSize()
	// Each turn moves to an array at a strictly higher offset, so the loop ends within the file.
	for {
		size, _, err := r.object(r.arrayOff, objEntryArray, arrayFixedSize)
		if err != nil {
			return 0, r.stick(fmt.Errorf("entry array at %d: %w", r.arrayOff, err))
		}
		if items := (size - arrayFixedSize) / isz; r.arrayIdx < items {
			off, err := r.readOffset(r.arrayOff + arrayFixedSize + r.arrayIdx*isz)
			if err != nil {
				return 0, r.stick(err)
			}
			if off == 0 {
				return 0, io.EOF // the unfilled tail of the last array
			}
			if off <= r.lastEntry {
				return 0, r.stick(corrupt("entry array at %d item %d points back to %d (after %d)", r.arrayOff, r.arrayIdx, off, r.lastEntry))
			}
			if off >= r.size {
				return 0, r.stick(corrupt("entry offset %d beyond the file's %d bytes (truncated)", off, r.size))
			}
			r.arrayIdx++
			r.consumed++
			r.lastEntry = off
			return off, nil
		}
		next, err := r.readOffset(r.arrayOff + 16)
		if err != nil {
			return 0, r.stick(err)
		}
		if next == 0 {
			return 0, io.EOF
		}
		if next <= r.arrayOff {
			return 0, r.stick(corrupt("entry array at %d links back to %d (loop)", r.arrayOff, next))
		}
		r.arrayOff, r.arrayIdx = next, 0
	}
}

// Broken returns the error that ended the walk through the entry array chain, or nil.
func (r *Reader) Broken() error { return r.sticky }

func (r *Reader) stick(err error) error {
	r.sticky = err
	return err
}

// entry reads the entry object at off. skip is true when its seqnum is below MinSeqnum.
func (r *Reader) entry(off uint64) (*Entry, bool, error) {
	size, _, err := r.object(off, objEntry, entryFixedSize)
	if err != nil {
		return nil, false, err
	}
	var fixed [entryFixedSize]byte
	if err := r.readAt(fixed[:], off); err != nil {
		return nil, false, err
	}
	e := &Entry{
		Offset: off, Seqnum: le.Uint64(fixed[16:]), Realtime: le.Uint64(fixed[24:]),
		Monotonic: le.Uint64(fixed[32:]), XorHash: le.Uint64(fixed[56:]), SeqnumID: r.hdr.SeqnumID,
	}
	copy(e.BootID[:], fixed[40:56])
	if e.Seqnum < r.MinSeqnum {
		return nil, true, nil
	}
	isz := uint64(16)
	if r.hdr.Compact() {
		isz = 4
	}
	n := (size - entryFixedSize) / isz
	if n > MaxEntryItems {
		return nil, false, corrupt("%d items, more than %d", n, MaxEntryItems)
	}
	items := make([]byte, n*isz)
	if err := r.readAt(items, off+entryFixedSize); err != nil {
		return nil, false, err
	}
	e.Fields = make([]Field, 0, n)
	for i := uint64(0); i < n; i++ {
		var doff uint64
		if isz == 4 {
			doff = uint64(le.Uint32(items[i*4:]))
		} else {
			doff = le.Uint64(items[i*16:])
		}
		f, err := r.data(doff)
		if err != nil {
			if e.BadFields == 0 {
				e.FieldErr = fmt.Errorf("item %d: %w", i, err)
			}
			e.BadFields++
			continue
		}
		e.Fields = append(e.Fields, f)
	}
	return e, false, nil
}

// cacheLimit bounds the decoded DATA objects kept: most entries of a unit share their _HOSTNAME,
// _SYSTEMD_UNIT, _BOOT_ID... objects.
const (
	cacheLimit    = 4096
	cacheMaxValue = 256
)

func (r *Reader) data(off uint64) (Field, error) {
	if f, ok := r.cache[off]; ok {
		return f, nil
	}
	payloadOff := uint64(dataRegular)
	if r.hdr.Compact() {
		payloadOff = dataCompact
	}
	size, flags, err := r.object(off, objData, payloadOff)
	if err != nil {
		return Field{}, err
	}
	n := size - payloadOff
	if n > MaxDataSize {
		return Field{}, corrupt("DATA object at %d of %d bytes, more than %d", off, n, MaxDataSize)
	}
	if uint64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	raw := r.buf[:n]
	if err := r.readAt(raw, off+payloadOff); err != nil {
		return Field{}, err
	}
	var payload []byte
	if flags&objCompressedMask != 0 {
		payload, err = decompress(flags&objCompressedMask, raw)
		if err != nil {
			return Field{}, fmt.Errorf("DATA object at %d: %w", off, err)
		}
	} else {
		payload = raw
	}
	eq := bytes.IndexByte(payload, '=')
	if eq <= 0 {
		return Field{}, corrupt("DATA object at %d has no FIELD= prefix", off)
	}
	f := Field{Name: string(payload[:eq]), Value: bytes.Clone(payload[eq+1:])}
	if len(f.Value) <= cacheMaxValue {
		if len(r.cache) >= cacheLimit {
			clear(r.cache)
		}
		r.cache[off] = f
	}
	return f, nil
}
