// SPDX-License-Identifier: Apache-2.0

package idlegcextension

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-k8s/otelcol-k8s/extension/idlegcextension/internal/binarypages"
	"github.com/otelcol-k8s/otelcol-k8s/extension/idlegcextension/internal/memlimit"
)

// TestDetector: readings of the bytes allocated, 5 s apart, against a threshold of 256 KiB/s
// held for 30 s. Expectations worked out by hand from the rates.
func TestDetector(t *testing.T) {
	const kib = 1024
	tests := []struct {
		name  string
		rates []float64 // KiB/s over each 5 s interval
		want  []bool    // idle after each reading
	}{
		{
			name:  "quiet for 30 s becomes idle at the sixth reading",
			rates: []float64{10, 10, 10, 10, 10, 10, 10},
			want:  []bool{false, false, false, false, false, true, true},
		},
		{
			name:  "a burst restarts the quiet time",
			rates: []float64{10, 10, 10, 10, 300, 10, 10, 10, 10, 10, 10},
			want:  []bool{false, false, false, false, false, false, false, false, false, false, true},
		},
		{
			name:  "busy again at the first reading at the threshold",
			rates: []float64{0, 0, 0, 0, 0, 0, 256, 0},
			want:  []bool{false, false, false, false, false, true, false, false},
		},
		{
			name:  "always busy",
			rates: []float64{1000, 257, 400},
			want:  []bool{false, false, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Unix(1_700_000_000, 0)
			d := detector{below: 256 * kib, after: 30 * time.Second, lastTime: start}
			var allocated uint64
			for i, r := range tt.rates {
				allocated += uint64(r * kib * 5)
				now := start.Add(time.Duration(i+1) * 5 * time.Second)
				idle, changed := d.observe(now, allocated)
				require.Equal(t, tt.want[i], idle, "reading %d", i)
				was := i > 0 && tt.want[i-1]
				require.Equal(t, was != tt.want[i], changed, "reading %d", i)
			}
		})
	}
}

// fakeRuntime records what the extension asks of the runtime and lets the test choose the
// allocation counter.
type fakeRuntime struct {
	mu        sync.Mutex
	allocated uint64
	percent   int
	frees     int
	releases  int
	// releaseErr is what releasing the executable's pages returns.
	releaseErr error
	// ratios are the memory limit ratios asked for.
	ratios []float64
}

func (f *fakeRuntime) hooks() runtimeHooks {
	return runtimeHooks{
		allocated: func() uint64 { f.mu.Lock(); defer f.mu.Unlock(); return f.allocated },
		gcPercent: func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.percent },
		setGCPercent: func(p int) int {
			f.mu.Lock()
			defer f.mu.Unlock()
			old := f.percent
			f.percent = p
			return old
		},
		freeOSMemory: func() { f.mu.Lock(); defer f.mu.Unlock(); f.frees++ },
		releaseBinaryPages: func() (int64, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.releases++
			return 4 << 20, f.releaseErr
		},
		setMemoryLimit: func(ratio float64) memlimit.Decision {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.ratios = append(f.ratios, ratio)
			return memlimit.Decision{Limit: 400 << 20, Cgroup: 500 << 20}
		},
	}
}

// TestMemoryLimitFromCgroup: memory_limit_percent asks once, at start, for that part of the
// cgroup's limit; 0 never touches the limit.
func TestMemoryLimitFromCgroup(t *testing.T) {
	for _, tt := range []struct {
		percent int
		want    []float64
	}{
		{percent: 80, want: []float64{0.8}},
		{percent: 55, want: []float64{0.55}},
		{percent: 0, want: nil},
	} {
		t.Run(strconv.Itoa(tt.percent), func(t *testing.T) {
			rt := &fakeRuntime{percent: 100}
			g := newTestIdleGC(t, rt)
			g.cfg.MemoryLimitPercent = tt.percent
			require.NoError(t, g.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, g.Shutdown(context.Background()))
			rt.mu.Lock()
			defer rt.mu.Unlock()
			require.Equal(t, tt.want, rt.ratios)
		})
	}
}

func (f *fakeRuntime) released() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.releases
}

func (f *fakeRuntime) state() (percent, frees int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.percent, f.frees
}

func (f *fakeRuntime) allocate(n uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.allocated += n
}

func newTestIdleGC(t *testing.T, rt *fakeRuntime) *idleGC {
	cfg := &Config{CheckInterval: 100 * time.Millisecond, IdleBelowKiBPerSecond: 1024, IdleAfter: 300 * time.Millisecond, IdleGCPercent: 25, ReleaseBinaryPages: true}
	require.NoError(t, cfg.Validate())
	g, err := newIdleGC(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	g.rt = rt.hooks()
	return g
}

// TestLowersWhenIdleAndRestores: with nothing allocated the target drops to idle_gc_percent
// and unused memory is returned once; a burst of allocation puts the collector's own target
// back at the next check; shutdown restores it too.
func TestLowersWhenIdleAndRestores(t *testing.T) {
	rt := &fakeRuntime{percent: 100}
	g := newTestIdleGC(t, rt)
	require.NoError(t, g.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { p, _ := rt.state(); return p == 25 }, 5*time.Second, 10*time.Millisecond, "never lowered")
	_, frees := rt.state()
	require.Equal(t, 1, frees, "memory returned once on becoming idle")
	require.Equal(t, 1, rt.released(), "the executable's pages released once on becoming idle")

	// Busy: far above 1 MiB/s at every check until the target is back.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				rt.allocate(1 << 20)
			}
		}
	}()
	require.Eventually(t, func() bool { p, _ := rt.state(); return p == 100 }, 5*time.Second, 10*time.Millisecond, "never restored")
	close(stop)
	wg.Wait()

	// Idle again, then shut down while idle: the collector's own target comes back.
	require.Eventually(t, func() bool { p, _ := rt.state(); return p == 25 }, 5*time.Second, 10*time.Millisecond, "never lowered again")
	require.NoError(t, g.Shutdown(context.Background()))
	p, frees := rt.state()
	require.Equal(t, 100, p)
	require.Equal(t, 2, frees)
	require.Equal(t, 2, rt.released())
}

// TestReleaseAfterStart: once every pipeline has started (Ready), the pages start-up touched
// are released, whatever the garbage collector's target; not when switched off.
func TestReleaseAfterStart(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		rt := &fakeRuntime{percent: -1} // GOGC=off: the target is left alone, the pages are not
		g := newTestIdleGC(t, rt)
		g.cfg.ReleaseBinaryPages = enabled
		require.NoError(t, g.Start(context.Background(), componenttest.NewNopHost()))
		require.NoError(t, g.Ready())
		require.NoError(t, g.NotReady())
		require.NoError(t, g.Shutdown(context.Background()))
		want := 0
		if enabled {
			want = 1
		}
		require.Equal(t, want, rt.released(), "release_binary_pages %v", enabled)
	}
}

// TestReleaseBinaryPages: three idle periods; the executable's pages are released on each,
// unless switched off, and never again once the kernel proved unable to (an other failure is
// retried at the next idle period).
func TestReleaseBinaryPages(t *testing.T) {
	tests := []struct {
		name    string
		enabled bool
		err     error
		want    int
	}{
		{"released at every idle period", true, nil, 3},
		{"switched off", false, nil, 0},
		{"unsupported: tried once", true, fmt.Errorf("%w: madvise: invalid argument", binarypages.ErrUnsupported), 1},
		{"another failure: tried again", true, errors.New("no read-only mapping"), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &fakeRuntime{percent: 100, releaseErr: tt.err}
			g := newTestIdleGC(t, rt)
			g.cfg.ReleaseBinaryPages = tt.enabled
			g.busy = 100
			for range 3 {
				g.switchTo(context.Background(), true)
				g.switchTo(context.Background(), false)
			}
			require.Equal(t, tt.want, rt.released())
			p, frees := rt.state()
			require.Equal(t, 100, p)
			require.Equal(t, 3, frees, "the garbage collector's part does not depend on it")
		})
	}
}

// TestNothingToLower: with collection off or a target already at or below idle_gc_percent the
// extension never touches the target.
func TestNothingToLower(t *testing.T) {
	for _, percent := range []int{-1, 25, 10} {
		rt := &fakeRuntime{percent: percent}
		g := newTestIdleGC(t, rt)
		require.NoError(t, g.Start(context.Background(), componenttest.NewNopHost()))
		time.Sleep(500 * time.Millisecond) // longer than idle_after
		require.NoError(t, g.Shutdown(context.Background()))
		p, frees := rt.state()
		require.Equal(t, percent, p)
		require.Zero(t, frees)
	}
}

// TestRealRuntime: the real hooks read the runtime's counters and the target round-trips.
func TestRealRuntime(t *testing.T) {
	before := goRuntime.allocated()
	sink = make([]byte, 1<<20)
	require.GreaterOrEqual(t, goRuntime.allocated()-before, uint64(1<<20))
	old := goRuntime.gcPercent()
	require.Equal(t, old, goRuntime.setGCPercent(37))
	require.Equal(t, 37, goRuntime.gcPercent())
	goRuntime.setGCPercent(-1) // GOGC=off
	require.Equal(t, -1, goRuntime.gcPercent())
	goRuntime.setGCPercent(old)
}

var sink []byte
