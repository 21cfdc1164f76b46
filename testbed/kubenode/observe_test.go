// SPDX-License-Identifier: Apache-2.0

package kubenode

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"
)

// lateWrite is what a rotation looked like from a reader that notices the new file at once:
// the renamed file's size when the new 0.log was first seen, its size at the end, and when it
// last grew (after the new file appeared).
type lateWrite struct {
	SizeAtNewFile int64         // bytes in the renamed file when the new 0.log was first seen
	FinalSize     int64         // bytes in it at the end of the watch
	LastGrowth    time.Duration // after the new 0.log was first seen; 0: it never grew again
}

// rotationObserver follows one container log path as closely as a poll every millisecond
// allows: it keeps the current file open and, when a new file takes the path, watches the
// old one through its descriptor for a while to see whether the runtime still writes to it.
type rotationObserver struct {
	mu    sync.Mutex
	late  []lateWrite
	watch sync.WaitGroup
}

func observeRotations(ctx context.Context, path string, afterFor time.Duration) *rotationObserver {
	o := &rotationObserver{}
	o.watch.Add(1)
	go func() {
		defer o.watch.Done()
		var cur *os.File
		var curIno uint64
		for ctx.Err() == nil {
			var st syscall.Stat_t
			if err := syscall.Stat(path, &st); err == nil && st.Ino != curIno {
				f, err := os.Open(path)
				if err == nil {
					if cur != nil {
						old := cur
						var ost syscall.Stat_t
						_ = syscall.Fstat(int(old.Fd()), &ost)
						o.watch.Add(1)
						go o.follow(old, ost.Size, time.Now(), afterFor)
					}
					cur, curIno = f, st.Ino
				}
			}
			time.Sleep(time.Millisecond) // a poll, as a reader of the files does
		}
		if cur != nil {
			_ = cur.Close()
		}
	}()
	return o
}

func (o *rotationObserver) follow(f *os.File, sizeAtNew int64, seen time.Time, afterFor time.Duration) {
	defer o.watch.Done()
	defer func() { _ = f.Close() }()
	lw := lateWrite{SizeAtNewFile: sizeAtNew, FinalSize: sizeAtNew}
	for time.Since(seen) < afterFor {
		var st syscall.Stat_t
		if err := syscall.Fstat(int(f.Fd()), &st); err == nil && st.Size != lw.FinalSize {
			lw.FinalSize, lw.LastGrowth = st.Size, time.Since(seen)
		}
		time.Sleep(time.Millisecond)
	}
	o.mu.Lock()
	o.late = append(o.late, lw)
	o.mu.Unlock()
}

// results waits for the watches to end and returns one entry per rotation seen.
func (o *rotationObserver) results() []lateWrite {
	o.watch.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]lateWrite(nil), o.late...)
}
