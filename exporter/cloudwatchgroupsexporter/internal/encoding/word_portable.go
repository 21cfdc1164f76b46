// SPDX-License-Identifier: Apache-2.0

//go:build !(amd64 || arm64 || 386 || ppc64le)

package encoding

import (
	"encoding/binary"
	"unsafe"
)

// load8 returns the 8 bytes at p as a little-endian word, on any byte order and alignment.
func load8(p unsafe.Pointer) uint64 { return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(p), 8)) }

// store8 writes x at p as a little-endian word.
func store8(p unsafe.Pointer, x uint64) {
	binary.LittleEndian.PutUint64(unsafe.Slice((*byte)(p), 8), x)
}
