// SPDX-License-Identifier: Apache-2.0

package journalfile

import (
	"errors"
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver/internal/journaltest"
)

// BenchmarkRead reads every entry, fields included, of a compact zstd file from systemd's writer.
func BenchmarkRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "system.journal")
	const n = 20000
	journaltest.Write(b, path, journaltest.Generate(5, n, 40, 1_700_000_000_000_000), nil)
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		r, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		_ = r.Close()
		if got != n {
			b.Fatalf("%d entries", got)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
	// On a shared machine the CPU time the process got says more than the wall clock.
	b.ReportMetric(float64(n*b.N)/(cpuTime()-cpu0).Seconds(), "entries/cpu-s")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
