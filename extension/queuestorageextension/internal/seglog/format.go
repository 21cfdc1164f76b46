// SPDX-License-Identifier: Apache-2.0

package seglog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The on-disk format (design.md, rules 2 and 3).
const (
	groupMagic      = uint32('Q') | uint32('S')<<8 | uint32('G')<<16 | uint32('1')<<24
	groupHeaderSize = 16
	recHeaderSize   = 13
	kindSet         = 1
	kindDelete      = 2
	// MaxKeyOrValue is the longest key or value a record holds.
	MaxKeyOrValue = 1 << 30
	// maxGroupPayload is the most bytes of records one group holds (its length field is 32 bits).
	maxGroupPayload = 1<<32 - 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	errTooLarge   = errors.New("queue_storage: key or value longer than 1 GiB")
	errBatchLarge = errors.New("queue_storage: batch larger than 4 GiB")
	errCorrupt    = errors.New("queue_storage: corrupt record")
)

// recordSize is the encoded length of a record of a key and a value of these lengths.
func recordSize(keyLen, valueLen int) int { return recHeaderSize + keyLen + valueLen }

// appendRecord appends one record to buf.
func appendRecord(buf []byte, kind byte, key string, value []byte) []byte {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, kind)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(key)))   //nolint:gosec // at most MaxKeyOrValue
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(value))) //nolint:gosec // at most MaxKeyOrValue
	buf = append(buf, key...)
	buf = append(buf, value...)
	binary.LittleEndian.PutUint32(buf[start:], crc32.Checksum(buf[start+4:], castagnoli))
	return buf
}

// startGroup appends the room for a group header to buf; finishGroup fills it in.
func startGroup(buf []byte) []byte { return append(buf, make([]byte, groupHeaderSize)...) }

// finishGroup writes the header of the group that starts at buf[0] and holds count records.
func finishGroup(buf []byte, count int) {
	binary.LittleEndian.PutUint32(buf[0:], groupMagic)
	binary.LittleEndian.PutUint32(buf[4:], uint32(count))                    //nolint:gosec // bounded by the payload length
	binary.LittleEndian.PutUint32(buf[8:], uint32(len(buf)-groupHeaderSize)) //nolint:gosec // checked against maxGroupPayload
	binary.LittleEndian.PutUint32(buf[12:], crc32.Checksum(buf[:12], castagnoli))
}

// groupHeader is a decoded group header.
type groupHeader struct {
	count  uint32
	length uint32
}

// parseGroupHeader decodes and checks a group header.
func parseGroupHeader(b []byte) (groupHeader, error) {
	if len(b) < groupHeaderSize {
		return groupHeader{}, fmt.Errorf("%w: group header of %d bytes", errCorrupt, len(b))
	}
	if binary.LittleEndian.Uint32(b[0:]) != groupMagic {
		return groupHeader{}, fmt.Errorf("%w: no group magic", errCorrupt)
	}
	if binary.LittleEndian.Uint32(b[12:]) != crc32.Checksum(b[:12], castagnoli) {
		return groupHeader{}, fmt.Errorf("%w: group header checksum", errCorrupt)
	}
	h := groupHeader{count: binary.LittleEndian.Uint32(b[4:]), length: binary.LittleEndian.Uint32(b[8:])}
	if uint64(h.count)*recHeaderSize > uint64(h.length) {
		return groupHeader{}, fmt.Errorf("%w: %d records cannot fit in %d bytes", errCorrupt, h.count, h.length)
	}
	return h, nil
}

// record is a decoded record; key and value alias the buffer it was parsed from.
type record struct {
	kind  byte
	key   []byte
	value []byte
	size  int // encoded length
}

// parseRecord decodes and checks the record at the start of b.
func parseRecord(b []byte) (record, error) {
	if len(b) < recHeaderSize {
		return record{}, fmt.Errorf("%w: record header of %d bytes", errCorrupt, len(b))
	}
	kind := b[4]
	keyLen := uint64(binary.LittleEndian.Uint32(b[5:]))
	valueLen := uint64(binary.LittleEndian.Uint32(b[9:]))
	if kind != kindSet && kind != kindDelete {
		return record{}, fmt.Errorf("%w: record kind %d", errCorrupt, kind)
	}
	if keyLen > MaxKeyOrValue || valueLen > MaxKeyOrValue || (kind == kindDelete && valueLen != 0) {
		return record{}, fmt.Errorf("%w: record lengths %d and %d", errCorrupt, keyLen, valueLen)
	}
	size := recHeaderSize + keyLen + valueLen
	if size > uint64(len(b)) {
		return record{}, fmt.Errorf("%w: record of %d bytes in %d", errCorrupt, size, len(b))
	}
	if binary.LittleEndian.Uint32(b) != crc32.Checksum(b[4:size], castagnoli) {
		return record{}, fmt.Errorf("%w: record checksum", errCorrupt)
	}
	return record{
		kind:  kind,
		key:   b[recHeaderSize : recHeaderSize+keyLen],
		value: b[recHeaderSize+keyLen : size],
		size:  int(size),
	}, nil
}

// parseGroupRecords decodes the records of a group's payload: all of them or an error.
func parseGroupRecords(h groupHeader, payload []byte, fn func(off int, r record)) error {
	var recs []record
	var offs []int
	off := 0
	for range h.count {
		r, err := parseRecord(payload[off:])
		if err != nil {
			return err
		}
		recs = append(recs, r)
		offs = append(offs, off)
		off += r.size
	}
	if off != len(payload) {
		return fmt.Errorf("%w: group of %d records holds %d bytes, its header says %d", errCorrupt, h.count, off, len(payload))
	}
	for i, r := range recs {
		fn(offs[i], r)
	}
	return nil
}
