// SPDX-License-Identifier: Apache-2.0

package bufpool

import (
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"
)

func TestGetSizes(t *testing.T) {
	drainAll()
	tests := []struct {
		n       int
		wantCap int
	}{
		{n: 0, wantCap: 4 << 10},
		{n: 1, wantCap: 4 << 10},
		{n: 4 << 10, wantCap: 4 << 10},
		{n: 4<<10 + 1, wantCap: 8 << 10},
		{n: 1_048_576, wantCap: 1 << 20},
		{n: 1_048_577, wantCap: 2 << 20},
		{n: 8 << 20, wantCap: 8 << 20},
		{n: 8<<20 + 1, wantCap: 8<<20 + 1},
	}
	for _, tt := range tests {
		b := Get(tt.n)
		if len(b) != tt.n || cap(b) != tt.wantCap {
			t.Errorf("Get(%d): len %d cap %d, want len %d cap %d", tt.n, len(b), cap(b), tt.n, tt.wantCap)
		}
	}
}

// A buffer whose capacity is not a size class never comes back from Get: Get would hand out
// less room than its class promises.
func TestPutDropsOtherSizes(t *testing.T) {
	tests := []struct {
		name string
		buf  []byte
	}{
		{name: "between classes", buf: make([]byte, 10, 64<<10+1)},
		{name: "below the smallest class", buf: make([]byte, 10, 2<<10)},
		{name: "above the largest class", buf: make([]byte, 10, 16<<20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Put(tt.buf)
			for _, n := range []int{cap(tt.buf), 64 << 10, 4 << 10} {
				if got := Get(n); cap(got) > 0 && &got[:1][0] == &tt.buf[:1][0] {
					t.Errorf("Get(%d) returned the dropped buffer of capacity %d", n, cap(tt.buf))
				}
			}
		})
	}
}

// Get takes the buffer given back last, of the class asked for.
func TestGetTakesTheLastGivenBack(t *testing.T) {
	noCollections(t)
	first, second := Get(100<<10), Get(100<<10)
	Put(first)
	Put(second)
	other := Get(8 << 10)
	if got := Get(70 << 10); !same(got, second) || cap(got) != 128<<10 {
		t.Fatalf("Get(70 KiB) did not return the 128 KiB buffer given back last (cap %d)", cap(got))
	}
	if got := Get(128 << 10); !same(got, first) {
		t.Fatal("Get(128 KiB) did not return the buffer given back before it")
	}
	if same(other, first) || same(other, second) {
		t.Fatal("Get(8 KiB) returned a buffer of another class")
	}
}

// A buffer not taken again within the collection cycle after the one it was given back in is
// dropped; one taken and given back in the meantime stays.
func TestIdleBuffersAgeOut(t *testing.T) {
	noCollections(t)
	const size = 2 << 20
	drain(size)
	idle, busy := Get(size), Get(size)
	Put(idle)
	Put(busy)
	endOfCycle() // both waited through part of a cycle: kept
	if got := Get(size); !same(got, busy) {
		t.Fatal("a buffer given back in the cycle just ended was dropped")
	}
	Put(busy)    // taken and given back: it starts waiting again
	endOfCycle() // idle waited through this whole cycle: dropped
	if got := Get(size); !same(got, busy) {
		t.Fatal("the buffer given back during the last cycle was dropped")
	}
	if got := Get(size); same(got, idle) {
		t.Fatal("a buffer idle through a whole cycle was kept")
	}
}

// The cycles are the garbage collector's: after a few real collections an idle buffer is
// gone.
func TestIdleBuffersDropAfterCollections(t *testing.T) {
	const size = 4 << 20
	drain(size)
	b := Get(size)
	Put(b)
	for range 200 {
		runtime.GC()
		mu.Lock()
		left := len(stacks[class(size)])
		mu.Unlock()
		if left == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond) // cleanups run on their own goroutine
	}
	t.Fatal("an idle buffer was still kept after 200 collections")
}

// Buffers handed out at the same time are never the same: each goroutine writes its own
// pattern into what it holds and finds it unchanged before giving it back.
func TestConcurrentUse(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				b := Get(4<<10 + (i%3)*8<<10)
				for j := range b {
					b[j] = byte(g)
				}
				for j := range b {
					if b[j] != byte(g) {
						t.Errorf("goroutine %d: byte %d of its buffer changed to %d", g, j, b[j])
						return
					}
				}
				Put(b)
				if i%500 == 0 {
					endOfCycle()
				}
			}
		})
	}
	wg.Wait()
}

// A class with no buffer takes one of the class above; two classes above is too large.
func TestGetServesFromTheNextClass(t *testing.T) {
	noCollections(t)
	drainAll()
	double, quadruple := Get(128<<10), Get(256<<10)
	Put(quadruple)
	Put(double)
	if got := Get(40 << 10); !same(got, double) || len(got) != 40<<10 {
		t.Fatalf("Get(40 KiB) with only a 128 KiB buffer idle: cap %d, want that buffer", cap(got))
	}
	if got := Get(40 << 10); same(got, quadruple) || cap(got) != 64<<10 {
		t.Fatalf("Get(40 KiB) took a buffer two classes up (cap %d)", cap(got))
	}
	if got := Get(200 << 10); !same(got, quadruple) {
		t.Fatal("Get(200 KiB) did not take the idle 256 KiB buffer")
	}
}

// noCollections turns the garbage collector off for the rest of the test, once the cycle it
// finishes now has been seen: no cycle then ages the stacks but the test's own endOfCycle.
func noCollections(t *testing.T) {
	t.Helper()
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	mu.Lock()
	before := cycle
	mu.Unlock()
	runtime.GC()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(time.Millisecond) {
		mu.Lock()
		seen := cycle > before
		mu.Unlock()
		if seen {
			return
		}
	}
	t.Fatal("the end of a collection cycle was not seen")
}

// drainAll empties every class.
func drainAll() {
	mu.Lock()
	defer mu.Unlock()
	clear(stacks[:])
}

// drain empties the stack of size's class.
func drain(size int) {
	mu.Lock()
	defer mu.Unlock()
	stacks[class(size)] = nil
}

func same(a, b []byte) bool { return &a[:1][0] == &b[:1][0] }
