// SPDX-License-Identifier: Apache-2.0

// Package bufpool recycles the exporter's large byte buffers (message arena chunks, queue
// items being encoded or decoded) by power-of-two size class. Each of them has an end of
// life the exporter knows; returning it there keeps those bytes from driving the garbage
// collector, which otherwise runs once per heap's worth of them.
//
// Each class keeps the buffers given back in a stack, and Get takes the one given back last.
// A buffer that waits in its stack through a whole garbage collection cycle without being
// taken is dropped at the end of the next one: the stacks hold about the largest number of
// buffers the exporter had in use at once lately, and nothing once it has been idle for two
// cycles. (sync.Pool, used before, empties itself at every cycle and so missed often under
// load, and the buffers of its previous cycle waited beside those of the current one.)
package bufpool // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/bufpool"

import (
	"math/bits"
	"runtime"
	"sync"
)

const (
	minShift = 12 // 4 KiB: smaller buffers are not worth a pool
	maxShift = 23 // 8 MiB: larger ones are rare and left to the garbage collector
)

// idleBuffer is a buffer waiting in its class's stack, with the collection cycle it was
// given back in.
type idleBuffer struct {
	b     []byte
	cycle uint64
}

var (
	mu sync.Mutex
	// stacks holds each class's idle buffers, the one given back last at the end; the
	// cycles never decrease along a stack.
	stacks [maxShift - minShift + 1][]idleBuffer
	// cycle counts the garbage collection cycles seen (watchCycles).
	cycle uint64
)

func init() { watchCycles() }

// cycleMark is an object nothing references: its cleanup runs once a collection cycle has
// found it unreachable. It holds a pointer so it is never one of the tiny objects whose
// cleanups may not run.
type cycleMark struct{ _ *cycleMark }

// watchCycles arranges for endOfCycle to run after the next garbage collection cycle, and
// again after each one that follows.
func watchCycles() {
	runtime.AddCleanup(new(cycleMark), func(struct{}) {
		endOfCycle()
		watchCycles()
	}, struct{}{})
}

// endOfCycle drops the buffers that waited through the whole cycle before this one.
func endOfCycle() {
	mu.Lock()
	defer mu.Unlock()
	cycle++
	for c, s := range stacks {
		keep := 0
		for keep < len(s) && s[keep].cycle+1 < cycle {
			keep++
		}
		if keep > 0 {
			n := copy(s, s[keep:])
			clear(s[n:])
			stacks[c] = s[:n]
		}
	}
}

// class returns the index of the smallest size class holding n bytes, or -1.
func class(n int) int {
	if n > 1<<maxShift {
		return -1
	}
	shift := max(bits.Len(uint(max(n, 1)-1)), minShift) //nolint:gosec // max(n, 1)-1 is not negative
	return shift - minShift
}

// Get returns a buffer of length n whose contents are undefined; its capacity is n rounded up
// to a size class, or the class above it (n itself when above the largest class).
func Get(n int) []byte {
	c := class(n)
	if c < 0 {
		return make([]byte, n)
	}
	mu.Lock()
	// A buffer of the next class serves when its own class has none: requests of about
	// one size straddle a class boundary, and otherwise each class keeps buffers of its own.
	for k := c; k <= min(c+1, len(stacks)-1); k++ {
		if s := stacks[k]; len(s) > 0 {
			b := s[len(s)-1].b
			s[len(s)-1] = idleBuffer{}
			stacks[k] = s[:len(s)-1]
			mu.Unlock()
			return b[:n]
		}
	}
	mu.Unlock()
	return make([]byte, n, 1<<(c+minShift))
}

// Put returns b for reuse. The caller must hold the only reference to b's array and never use
// it again. A buffer that Get did not size (its capacity is not a size class) is dropped.
func Put(b []byte) {
	c := class(cap(b))
	if c < 0 || cap(b) != 1<<(c+minShift) {
		return
	}
	mu.Lock()
	stacks[c] = append(stacks[c], idleBuffer{b: b[:0], cycle: cycle})
	mu.Unlock()
}
