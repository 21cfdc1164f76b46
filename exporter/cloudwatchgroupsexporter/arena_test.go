// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"strings"
	"testing"
)

// TestMessageArena writes messages of many sizes, some larger than a chunk, and checks every
// one still reads back as written after all the others.
func TestMessageArena(t *testing.T) {
	var a messageArena
	var want, got []string
	for i := range 2000 {
		size := (i * 7919) % (arenaReserve * 2)
		if i%500 == 499 {
			size = arenaChunk + i
		}
		m := strings.Repeat(string(rune('a'+i%26)), size)
		buf := a.begin()
		got = append(got, a.end(append(buf, m...)))
		want = append(want, m)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("message %d changed: len %d, want len %d", i, len(got[i]), len(want[i]))
		}
	}
}

// A small request's messages sit in a chunk sized from the request, not in a full chunk.
func TestArenaFirstChunkSizedFromRequest(t *testing.T) {
	a := messageArena{first: firstChunkFor(3)}
	for range 3 {
		a.end(append(a.begin(), strings.Repeat("x", 200)...))
	}
	if c := cap(a.buf); c > 2*arenaReserve {
		t.Fatalf("3 small messages hold a %d-byte chunk", c)
	}
	if got := firstChunkFor(1_000_000); got != arenaChunk {
		t.Fatalf("large request: first chunk %d, want %d", got, arenaChunk)
	}
}
