// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

import (
	"unsafe"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/bufpool"
)

const (
	// arenaChunk is the size of one arena chunk.
	arenaChunk = 256 << 10
	// arenaReserve is the free space below which a message starts a new chunk.
	arenaReserve = 8 << 10
)

// messageArena holds the encoded messages of one request in chunks that are only ever
// appended to, so each message can be shared as a string without a copy. A message is
// written at the end of the current chunk; a new chunk starts when little room is left, so
// a chunk rarely grows, and growing copies one chunk at most, never the whole request.
type messageArena struct {
	buf   []byte
	start int
	// first is the capacity of the first chunk (0: arenaChunk), sized from the request so a
	// small request does not pin a whole chunk while it waits in a memory queue.
	first int
	// chunks are every array a message was written to, for release.
	chunks [][]byte
}

// bytesPerRecordGuess sizes the first chunk: a typical container line plus the JSON fields.
const bytesPerRecordGuess = 512

// firstChunkFor returns the first chunk's capacity for a request of n records.
func firstChunkFor(n int) int {
	return min(max(n*bytesPerRecordGuess, 2*arenaReserve), arenaChunk)
}

// begin returns the buffer to append the next message to.
func (a *messageArena) begin() []byte {
	if cap(a.buf)-len(a.buf) < arenaReserve {
		size := arenaChunk
		if a.buf == nil && a.first > 0 {
			size = a.first
		}
		a.buf = bufpool.Get(size)[:0]
		a.chunks = append(a.chunks, a.buf)
	}
	a.start = len(a.buf)
	return a.buf
}

// end takes back the buffer the message was appended to and returns the message. The bytes
// are never written again: a later message is appended after them, or to another array if
// the chunk grows.
func (a *messageArena) end(buf []byte) string {
	if unsafe.SliceData(buf) != unsafe.SliceData(a.buf) { //nolint:gosec // compares two arrays' addresses: the chunk grew into a new one
		a.chunks = append(a.chunks, buf)
	}
	a.buf = buf
	msg := buf[a.start:]
	return unsafe.String(unsafe.SliceData(msg), len(msg)) //nolint:gosec // the bytes are never written again (above)
}

// releaseChunks returns chunks to the buffer pool. The caller must hold the only references
// to their messages and never read them again.
func releaseChunks(chunks [][]byte) {
	for _, c := range chunks {
		bufpool.Put(c)
	}
}
