// SPDX-License-Identifier: Apache-2.0

//go:build churn

package main

import (
	"sync/atomic"
	"time"
)

// Built with -tags churn (with or without clients), the empty collector also allocates 40 MiB/s
// of short-lived 256-byte objects and holds none of them: a pipeline with no working set at
// all, as far as the garbage collector can tell. What it holds then is the least any pipeline on
// that floor holds while it allocates at the default GOGC, whose heap target is twice the live
// heap (testbed/BENCHMARKS.md, issue 17, tenth look).

// churnSink keeps each allocation on the heap; the next one replaces it.
var churnSink atomic.Pointer[[256]byte]

func init() { go churn() }

func churn() {
	tick := time.NewTicker(10 * time.Millisecond)
	for range tick.C {
		for range 1600 { // 400 KiB every 10 ms
			churnSink.Store(new([256]byte))
		}
	}
}
