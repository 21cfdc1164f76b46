// SPDX-License-Identifier: Apache-2.0

// Package journalfile reads systemd journal files directly, following the journal file format
// systemd documents: the header (regular and compact layouts), objects, and the entry array
// chain that lists every entry in order. It never trusts an offset, a size or a count read from
// the file: every one is checked against the file's size and the layout before use, every loop
// is bounded, and a file that breaks a rule ends the walk with an error wrapping ErrCorrupt
// after the entries read safely so far.
package journalfile

import "errors"

// Signature is the first eight bytes of every journal file.
const Signature = "LPKSHHRH"

// Header incompatible flags.
const (
	IncompatCompressedXZ   uint32 = 1 << 0
	IncompatCompressedLZ4  uint32 = 1 << 1
	IncompatKeyedHash      uint32 = 1 << 2
	IncompatCompressedZSTD uint32 = 1 << 3
	IncompatCompact        uint32 = 1 << 4

	incompatSupported = IncompatCompressedXZ | IncompatCompressedLZ4 | IncompatKeyedHash |
		IncompatCompressedZSTD | IncompatCompact
)

// State is a journal file's state byte.
type State uint8

// File states.
const (
	StateOffline  State = 0
	StateOnline   State = 1
	StateArchived State = 2
)

// String is the state's name as journalctl --header prints it, in lower case.
func (s State) String() string {
	switch s {
	case StateOffline:
		return "offline"
	case StateOnline:
		return "online"
	case StateArchived:
		return "archived"
	}
	return "unknown"
}

// Object types.
const (
	objUnused     = 0
	objData       = 1
	objField      = 2
	objEntry      = 3
	objDataHash   = 4
	objFieldHash  = 5
	objEntryArray = 6
	objTag        = 7
)

// Object flags (compression of a DATA object's payload).
const (
	objCompressedXZ   = 1 << 0
	objCompressedLZ4  = 1 << 1
	objCompressedZSTD = 1 << 2
	objCompressedMask = objCompressedXZ | objCompressedLZ4 | objCompressedZSTD
)

// Layout sizes and offsets (little-endian throughout).
const (
	headerMinSize  = 208 // through tail_entry_monotonic: every file systemd ever wrote
	objHeaderSize  = 16
	entryFixedSize = 64 // object header, seqnum, realtime, monotonic, boot id, xor hash
	arrayFixedSize = 24 // object header, next array offset
	dataRegular    = 64 // payload offset of a DATA object, regular layout
	dataCompact    = 72 // payload offset of a DATA object, compact layout
)

// Limits that bound work on a hostile file.
const (
	// MaxDataSize bounds a DATA object's payload after decompression.
	MaxDataSize = 64 << 20
	// MaxEntryItems bounds the fields of one entry.
	MaxEntryItems = 1 << 16
)

// ErrCorrupt is wrapped by every error about a file's content (as opposed to an I/O error).
var ErrCorrupt = errors.New("corrupt journal file")

// ErrUnsupported is wrapped when a file uses an incompatible feature this reader does not know.
var ErrUnsupported = errors.New("unsupported journal file")
