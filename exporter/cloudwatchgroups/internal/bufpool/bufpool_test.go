// SPDX-License-Identifier: Apache-2.0

package bufpool

import "testing"

func TestGetSizes(t *testing.T) {
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

// Buffers put back are what Get returns for their class. The goroutine may move to another
// processor between the two (sync.Pool keeps per processor), so it is tried a few times.
func TestPutThenGetReuses(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	for range 10 {
		b := Get(100 << 10)
		Put(b)
		if got := Get(70 << 10); &got[:1][0] == &b[:1][0] && cap(got) == 128<<10 {
			return
		}
	}
	t.Fatal("Get never returned a buffer that was put back")
}
