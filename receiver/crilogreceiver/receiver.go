// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/joiner"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/tracker"
)

// maxPendingBytes bounds the text held by batches the next consumer refused. Beyond it no file
// reads more until refused batches are accepted; each file still holds at most one batch.
const maxPendingBytes = 64 << 20

// gaugeEvery is how often the gauges of files and lag are recorded at most.
const gaugeEvery = time.Second

// quietAfter is how long a file must not grow before it is looked at less often.
var quietAfter = 10 * time.Second // a variable for tests

// Storage keys.
const (
	indexKey      = "cri_log.index"
	filePrefixKey = "cri_log.file."
)

type criReceiver struct {
	cfg    *Config
	set    receiver.Settings
	next   consumer.Logs
	tb     *metadata.TelemetryBuilder
	obs    *receiverhelper.ObsReport
	logger *zap.Logger

	client  storage.Client
	tracker *tracker.Tracker
	watcher *tracker.Watcher
	files   map[*tracker.Reader]*fileState
	emitter emitter
	// gate leaves out files by namespace and Pod opt-out; gate.src is the Pod metadata source
	// (nil without pod_metadata).
	gate podGate

	// pendingBytes is the text held by refused batches, bounded by maxPendingBytes.
	pendingBytes int64
	// slotFreed records that a file was closed during the cycle.
	slotFreed bool
	// indexDirty marks that the set of saved files changed; deletes are keys to remove.
	indexDirty bool
	deletes    []string
	lastStats  tracker.Stats

	cancel  context.CancelFunc
	done    chan struct{}
	pinDone chan struct{}
	// orphans are checkpoints of files gone, holding unfinished entries to emit.
	orphans []tracker.State
	// vanished and openErrors are the pinner's counts already reported.
	vanished, openErrors int64
	// watchErrors is the watcher's count already reported.
	watchErrors int64
	// lastSave is when checkpoints were last written; unsaved records a commit since.
	lastSave time.Time
	unsaved  bool
	// lastReport is when gauges were last recorded.
	lastReport time.Time
	// watchedFiles are the readers of quiet files watched for their next write, by watch.
	watchedFiles map[int]*tracker.Reader
	mu           sync.Mutex // guards started
	start        bool
}

// fileState is the receiver's view of one reader: its pending batch and checkpoint.
type fileState struct {
	key      string
	resource resourceAttrs
	// pending is a batch refused by the consumer, offered again after retryAt.
	pending *batch
	closing bool // the pending batch is the file's last one
	retryAt time.Time
	// nextCheck delays looking at a quiet file.
	nextCheck time.Time
	// holdUntil is when a new file whose Pod's metadata is not known yet is read without it
	// (zero: not held).
	holdUntil time.Time
	// watch is the watch descriptor of a quiet file watched for its next write (0: none,
	// -1: watching failed, the file is polled).
	watch   int
	backoff time.Duration
	// committed is the encoded state after the last consumed batch; dirty means unsaved.
	committed   []byte
	dirty       bool
	savedOffset int64
	readOffset  int64
}

func newReceiver(set receiver.Settings, cfg *Config, next consumer.Logs) (*criReceiver, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID: set.ID, Transport: "file", LongLivedCtx: true, ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, err
	}
	return &criReceiver{
		cfg: cfg, set: set, next: next, tb: tb, obs: obs, logger: set.Logger,
		files: map[*tracker.Reader]*fileState{}, watchedFiles: map[int]*tracker.Reader{},
	}, nil
}

// Start loads checkpoints and starts the read loop.
func (r *criReceiver) Start(ctx context.Context, host component.Host) error {
	var known []tracker.State
	firstStart := true
	if r.cfg.Storage != nil {
		ext, ok := host.GetExtensions()[*r.cfg.Storage]
		if !ok {
			return fmt.Errorf("storage extension %s not found", r.cfg.Storage)
		}
		se, ok := ext.(storage.Extension)
		if !ok {
			return fmt.Errorf("extension %s is not a storage extension", r.cfg.Storage)
		}
		client, err := se.GetClient(ctx, component.KindReceiver, r.set.ID, "")
		if err != nil {
			return fmt.Errorf("storage client: %w", err)
		}
		r.client = client
		known, firstStart, err = loadCheckpoints(ctx, client)
		if err != nil {
			return err
		}
	}
	r.gate = podGate{include: r.cfg.Namespaces.Include, exclude: r.cfg.Namespaces.Exclude}
	if r.cfg.PodMetadata != nil {
		ext, ok := host.GetExtensions()[*r.cfg.PodMetadata]
		if !ok {
			return fmt.Errorf("pod_metadata: extension %s not found", r.cfg.PodMetadata)
		}
		src, ok := ext.(podmeta.Source)
		if !ok {
			return fmt.Errorf("pod_metadata: extension %s does not serve Pod metadata", r.cfg.PodMetadata)
		}
		r.gate.src = src
		r.emitter.extract = newExtractor(r.cfg.Extract)
	}
	var skip func(string) bool
	if r.gate.active() {
		skip = r.gate.skip
	}
	var isStart func([]byte) bool
	switch {
	case r.cfg.Multiline.Preset == PresetKlog || r.cfg.Multiline.Preset == PresetAuto:
		isStart = joiner.KlogStart
	case r.cfg.Multiline.LineStartPattern != "":
		isStart = regexp.MustCompile(r.cfg.Multiline.LineStartPattern).Match
	}
	r.tracker = tracker.New(tracker.Config{
		Include:            r.cfg.Include,
		Exclude:            r.cfg.Exclude,
		StartAtEnd:         r.cfg.StartAt == StartAtEnd,
		MaxConcurrentFiles: r.cfg.MaxConcurrentFiles,
		Skip:               skip,
		Read: tracker.ReadConfig{
			FingerprintSize:       r.cfg.FingerprintSize,
			MaxLogSize:            r.cfg.MaxLogSize,
			MaxBytesPerRead:       r.cfg.MaxBytesPerPoll,
			FlushTimeout:          int64(r.cfg.FlushTimeout),
			MultilineFlushTimeout: int64(r.cfg.Multiline.FlushTimeout),
			IsStart:               isStart,
			Traces:                r.cfg.Multiline.Preset == PresetStacktraces || r.cfg.Multiline.Preset == PresetAuto,
			MultilineInclude:      r.cfg.Multiline.Include,
		},
	}, known, firstStart)
	r.indexDirty = true // the index also records that a first start happened
	if w, err := tracker.NewWatcher(r.cfg.Include); err != nil {
		r.logger.Warn("directory watching unavailable; relying on polling", zap.Error(err))
		r.tb.ReceiverCriLogWatchErrors.Add(ctx, 1)
	} else {
		r.watcher = w
	}
	r.emitter.includePath = r.cfg.IncludeFilePath
	loopCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan struct{})
	r.mu.Lock()
	r.start = true
	r.mu.Unlock()
	r.pinDone = make(chan struct{})
	// The first discovery runs before Start returns: once the pipeline reports ready, start_at
	// has been applied to the files present and every later line is read.
	r.discover(time.Now())
	go r.run(loopCtx)
	go r.pin(loopCtx)
	return nil
}

// Shutdown stops the loop, saves the last checkpoints and closes the files.
func (r *criReceiver) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	started := r.start
	r.start = false
	r.mu.Unlock()
	if !started {
		return nil
	}
	r.cancel()
	for _, done := range []chan struct{}{r.done, r.pinDone} {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.tracker.Pinner().Close()
	var errs []error
	if r.watcher != nil {
		errs = append(errs, r.watcher.Close())
	}
	errs = append(errs, r.saveCheckpoints(ctx))
	for _, rd := range r.tracker.Readers() {
		_ = rd.Close()
	}
	if r.client != nil {
		errs = append(errs, r.client.Close(ctx))
	}
	r.tb.Shutdown()
	return errors.Join(errs...)
}

func (r *criReceiver) run(ctx context.Context) {
	defer close(r.done)
	poll := time.NewTimer(0)
	defer poll.Stop()
	// The pin goroutine walks the patterns, on directory events and every interval, and opens
	// new files; after each of its scans the loop adopts them and, from the same listing, marks
	// rotated and deleted files draining.
	scanned := r.tracker.Pinner().Ready()
	var wake <-chan struct{}
	if r.watcher != nil {
		wake = r.watcher.Wake
	}
	discoverNow := false
	for {
		select {
		case <-wake:
			r.wakeFiles()
		case <-scanned:
			discoverNow = true
		default:
		}
		now := time.Now()
		if discoverNow {
			r.discover(now)
			discoverNow = false
		}
		r.emitOrphans(ctx)
		progress := r.cycle(ctx)
		if r.slotFreed && r.tracker.Limited() {
			discoverNow = true // a waiting file can be opened now (from a listing made now)
		}
		r.slotFreed = false
		// While busy, checkpoints are written at most every checkpoint_interval; before the
		// loop sleeps, at once (an idle node's state is always saved).
		if !progress || now.Sub(r.lastSave) >= r.cfg.CheckpointInterval {
			if err := r.saveCheckpoints(ctx); err != nil && ctx.Err() == nil {
				r.logger.Warn("saving checkpoints failed; retrying at the next poll", zap.Error(err))
			}
		}
		r.report(ctx)
		if ctx.Err() != nil {
			return
		}
		if progress {
			continue // more data may be waiting: no sleep while busy
		}
		poll.Reset(r.cfg.PollInterval)
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		case <-scanned:
			discoverNow = true
		case <-wake:
			r.wakeFiles()
		}
	}
}
