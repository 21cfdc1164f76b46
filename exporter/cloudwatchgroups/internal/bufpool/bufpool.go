// SPDX-License-Identifier: Apache-2.0

// Package bufpool recycles the exporter's large byte buffers (message arena chunks, queue
// items being encoded or decoded) by power-of-two size class. Each of them has an end of
// life the exporter knows; returning it there keeps those bytes from driving the garbage
// collector, which otherwise runs once per heap's worth of them.
package bufpool // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/bufpool"

import (
	"math/bits"
	"sync"
)

const (
	minShift = 12 // 4 KiB: smaller buffers are not worth a pool
	maxShift = 23 // 8 MiB: larger ones are rare and left to the garbage collector
)

var classes [maxShift - minShift + 1]sync.Pool

// class returns the index of the smallest size class holding n bytes, or -1.
func class(n int) int {
	if n > 1<<maxShift {
		return -1
	}
	shift := max(bits.Len(uint(max(n, 1)-1)), minShift) //nolint:gosec // max(n, 1)-1 is not negative
	return shift - minShift
}

// Get returns a buffer of length n whose contents are undefined; its capacity is n rounded up
// to a size class (n itself when above the largest class).
func Get(n int) []byte {
	c := class(n)
	if c < 0 {
		return make([]byte, n)
	}
	if p, ok := classes[c].Get().(*[]byte); ok {
		return (*p)[:n]
	}
	return make([]byte, n, 1<<(c+minShift))
}

// Put returns b for reuse. The caller must hold the only reference to b's array and never use
// it again. A buffer that Get did not size (its capacity is not a size class) is dropped.
func Put(b []byte) {
	c := class(cap(b))
	if c < 0 || cap(b) != 1<<(c+minShift) {
		return
	}
	b = b[:0]
	classes[c].Put(&b)
}
