// SPDX-License-Identifier: Apache-2.0

//go:build amd64 || arm64 || 386 || ppc64le

package encoding

import "unsafe"

// load8 returns the 8 bytes at p as a little-endian word. These machines are little-endian
// and load from any address.
func load8(p unsafe.Pointer) uint64 { return *(*uint64)(p) }

// store8 writes x at p as a little-endian word.
func store8(p unsafe.Pointer, x uint64) { *(*uint64)(p) = x }
