// SPDX-License-Identifier: Apache-2.0

package idlegcextension

import (
	"context"
	"errors"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensioncapabilities"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/extension/idlegcextension/internal/binarypages"
	"github.com/otelcol-k8s/otelcol-k8s/extension/idlegcextension/internal/memlimit"
	"github.com/otelcol-k8s/otelcol-k8s/extension/idlegcextension/internal/metadata"
)

// runtimeHooks are the process-wide runtime calls the extension makes; tests replace them.
type runtimeHooks struct {
	// allocated returns the bytes allocated on the heap since the process started.
	allocated func() uint64
	// gcPercent returns the garbage collector's current target (negative: collection off).
	gcPercent func() int
	// setGCPercent sets the target (debug.SetGCPercent).
	setGCPercent func(int) int
	// freeOSMemory collects and returns unused memory to the operating system.
	freeOSMemory func()
	// releaseBinaryPages releases the executable's resident pages and returns the bytes that
	// went (binarypages.Release).
	releaseBinaryPages func() (int64, error)
	// setMemoryLimit sets the runtime's memory limit from the cgroup's (memlimit.Apply).
	setMemoryLimit func(ratio float64) memlimit.Decision
}

var goRuntime = runtimeHooks{
	allocated: func() uint64 { return readUint64("/gc/heap/allocs:bytes") },
	// The runtime reports GOGC=off (-1) as the uint64 of -1: the conversion gives -1 back.
	gcPercent:          func() int { return int(int64(readUint64("/gc/gogc:percent"))) },
	setGCPercent:       debug.SetGCPercent,
	freeOSMemory:       debug.FreeOSMemory,
	releaseBinaryPages: binarypages.Release,
	setMemoryLimit:     func(ratio float64) memlimit.Decision { return memlimit.Apply(memlimit.FS{}, ratio) },
}

func readUint64(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

var _ extensioncapabilities.PipelineWatcher = (*idleGC)(nil)

type idleGC struct {
	cfg    *Config
	tel    *metadata.TelemetryBuilder
	logger *zap.Logger
	rt     runtimeHooks

	// busy is the collector's own target, restored when work resumes and at shutdown.
	busy int
	mu   sync.Mutex // guards idle and noRelease: Ready and Shutdown race the loop's switches
	idle bool
	// noRelease is set once releasing the executable's pages proved unsupported here.
	noRelease bool
	cancel    context.CancelFunc
	done      chan struct{}
}

func newIdleGC(cfg *Config, set component.TelemetrySettings) (*idleGC, error) {
	tel, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	return &idleGC{cfg: cfg, tel: tel, logger: set.Logger, rt: goRuntime}, nil
}

// Start sets the memory limit from the cgroup's when configured, reads the collector's own
// target and, unless there is nothing to lower, starts measuring the allocation rate.
func (g *idleGC) Start(context.Context, component.Host) error {
	if g.cfg.MemoryLimitPercent > 0 {
		// Extensions start before the pipelines: the limit holds from the first record.
		d := g.rt.setMemoryLimit(float64(g.cfg.MemoryLimitPercent) / 100)
		if d.Limit > 0 {
			g.logger.Info("idle_gc: Go memory limit set from the cgroup's memory limit (GOMEMLIMIT was not set)",
				zap.Int64("limit_bytes", d.Limit), zap.Int64("cgroup_limit_bytes", d.Cgroup))
		} else {
			g.logger.Debug("idle_gc: Go memory limit left alone", zap.String("reason", d.Reason))
		}
	}
	g.busy = g.rt.gcPercent()
	if g.busy < 0 || g.busy <= g.cfg.IdleGCPercent {
		g.logger.Info("idle_gc: the garbage collector's target is off or already low; it is left alone",
			zap.Int("gc_percent", g.busy), zap.Int("idle_gc_percent", g.cfg.IdleGCPercent))
		return nil
	}
	g.tel.ExtensionIdleGcGcPercent.Record(context.Background(), int64(g.busy))
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel, g.done = cancel, make(chan struct{})
	go g.run(ctx)
	return nil
}

// Ready is called once every pipeline has started: the pages of the executable that start-up
// alone touched (package initialisation, factories, the configuration) are released at once,
// so that they are not resident while the collector works either.
func (g *idleGC) Ready() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.releaseBinaryPages(context.Background())
	return nil
}

// NotReady is called when the pipelines are about to stop; nothing to do.
func (*idleGC) NotReady() error { return nil }

// Shutdown stops measuring and puts the collector's own target back.
func (g *idleGC) Shutdown(context.Context) error {
	if g.cancel == nil {
		return nil
	}
	g.cancel()
	<-g.done
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.idle {
		g.rt.setGCPercent(g.busy)
		g.idle = false
	}
	return nil
}

func (g *idleGC) run(ctx context.Context) {
	defer close(g.done)
	t := time.NewTicker(g.cfg.CheckInterval)
	defer t.Stop()
	d := detector{
		below:     float64(g.cfg.IdleBelowKiBPerSecond) * 1024,
		after:     g.cfg.IdleAfter,
		lastBytes: g.rt.allocated(),
		lastTime:  time.Now(),
	}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if idle, changed := d.observe(now, g.rt.allocated()); changed {
				g.switchTo(ctx, idle)
			}
		}
	}
}

// switchTo lowers the target (and returns unused memory at once) or puts it back.
func (g *idleGC) switchTo(ctx context.Context, idle bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.idle = idle
	if !idle {
		g.rt.setGCPercent(g.busy)
		g.tel.ExtensionIdleGcGcPercent.Record(ctx, int64(g.busy))
		g.logger.Debug("idle_gc: busy again; garbage collector target restored", zap.Int("gc_percent", g.busy))
		return
	}
	g.rt.setGCPercent(g.cfg.IdleGCPercent)
	g.rt.freeOSMemory()
	g.tel.ExtensionIdleGcGcPercent.Record(ctx, int64(g.cfg.IdleGCPercent))
	g.tel.ExtensionIdleGcIdlePeriods.Add(ctx, 1)
	g.logger.Debug("idle_gc: idle; garbage collector target lowered", zap.Int("gc_percent", g.cfg.IdleGCPercent))
	g.releaseBinaryPages(ctx)
}

// releaseBinaryPages releases the executable's resident pages when configured, and stops
// trying where that is not supported. The caller holds g.mu.
func (g *idleGC) releaseBinaryPages(ctx context.Context) {
	if !g.cfg.ReleaseBinaryPages || g.noRelease {
		return
	}
	released, err := g.rt.releaseBinaryPages()
	switch {
	case errors.Is(err, binarypages.ErrUnsupported):
		g.noRelease = true
		g.logger.Info("idle_gc: the executable's pages cannot be released here; only the garbage collector's target is lowered", zap.Error(err))
	case err != nil:
		g.logger.Warn("idle_gc: releasing the executable's pages failed", zap.Error(err))
	default:
		g.tel.ExtensionIdleGcReleasedFileBytes.Add(ctx, released)
		g.logger.Debug("idle_gc: the executable's resident pages released", zap.Int64("bytes", released))
	}
}

// detector decides from successive readings of the bytes allocated whether the collector is
// idle: the rate stayed under below for at least after. Work resumes at the first reading
// whose rate is at or above below.
type detector struct {
	below     float64 // bytes per second
	after     time.Duration
	lastBytes uint64
	lastTime  time.Time
	// quietSince is when the rate went under below (zero: it is not).
	quietSince time.Time
	idle       bool
}

// observe takes a reading and reports the state and whether it changed.
func (d *detector) observe(now time.Time, allocated uint64) (idle, changed bool) {
	elapsed := now.Sub(d.lastTime).Seconds()
	if elapsed <= 0 {
		return d.idle, false
	}
	rate := float64(allocated-d.lastBytes) / elapsed
	d.lastBytes, d.lastTime = allocated, now
	was := d.idle
	switch {
	case rate >= d.below:
		d.quietSince, d.idle = time.Time{}, false
	case d.quietSince.IsZero():
		// The interval just measured was quiet: the quiet time counts from its start.
		d.quietSince = now.Add(-time.Duration(elapsed * float64(time.Second)))
		d.idle = now.Sub(d.quietSince) >= d.after
	default:
		d.idle = now.Sub(d.quietSince) >= d.after
	}
	return d.idle, d.idle != was
}
