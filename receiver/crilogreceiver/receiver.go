// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/joiner"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/podpath"
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

// wakeFiles makes the quiet files written to since they were watched due at once.
func (r *criReceiver) wakeFiles() {
	wds, all := r.watcher.TakeWoken()
	if all {
		// Events were lost: every watched file is looked at, and watched again when quiet.
		for rd := range maps.Values(r.watchedFiles) {
			if fs := r.files[rd]; fs != nil {
				fs.watch, fs.nextCheck = 0, time.Time{}
			}
		}
		clear(r.watchedFiles)
	}
	for _, wd := range wds {
		rd := r.watchedFiles[wd]
		delete(r.watchedFiles, wd)
		if fs := r.files[rd]; fs != nil && fs.watch == wd {
			fs.watch, fs.nextCheck = 0, time.Time{}
		}
	}
}

// quietCheck returns when a quiet file is looked at next, and releases a settled file's read
// buffers (Reader.Release). A settled file is watched for its
// next write, which wakes it at once; it is then looked at only as a safety net, every
// discovery interval. The first look after the watch is placed is at the next cycle, so a write
// just before the watch is not missed. Without a watch it is looked at every five polls.
func (r *criReceiver) quietCheck(rd *tracker.Reader, fs *fileState, now time.Time) time.Time {
	poll := now.Add(5 * r.cfg.PollInterval)
	settled := rd.Settled()
	if settled {
		rd.Release() // nothing pending: no buffer is needed until the file grows
	}
	if r.watcher == nil || !settled {
		r.unwatch(fs)
		return poll
	}
	switch {
	case fs.watch > 0:
		return now.Add(r.discoveryInterval())
	case fs.watch < 0:
		return poll
	}
	wd, err := r.watcher.WatchFile(rd.File())
	if err != nil {
		// fs.inotify.max_user_watches reached: this file is polled until it changes. The
		// watcher counts the failure (watch_errors) and the telemetry pass logs it.
		fs.watch = -1
		return poll
	}
	fs.watch = wd
	r.watchedFiles[wd] = rd
	return time.Time{}
}

// unwatch removes the watch of a quiet file, if it has one.
func (r *criReceiver) unwatch(fs *fileState) {
	if fs.watch > 0 {
		r.watcher.UnwatchFile(fs.watch)
		delete(r.watchedFiles, fs.watch)
	}
	fs.watch = 0
}

// discoveryInterval is how often the patterns are expanded without an event. With directory
// events, periodic discovery is only a safety net for missed events (queue overflow, a
// directory created just before its watch): it runs ten times less often.
func (r *criReceiver) discoveryInterval() time.Duration {
	if r.watcher != nil {
		return 10 * r.cfg.DiscoveryInterval
	}
	return r.cfg.DiscoveryInterval
}

// pin finds and opens new files on directory events and every discovery interval, whatever the
// read loop is doing: busy, or blocked in the next consumer. The opened descriptors keep the
// data of a file that is rotated or deleted before the loop gets to it.
func (r *criReceiver) pin(ctx context.Context) {
	defer close(r.pinDone)
	var events <-chan struct{}
	if r.watcher != nil {
		events = r.watcher.Discover
	}
	tick := time.NewTicker(r.discoveryInterval())
	defer tick.Stop()
	p := r.tracker.Pinner()
	for {
		// Start made the first scan.
		select {
		case <-ctx.Done():
			return
		case <-events:
		case <-tick.C:
		}
		p.Scan(r.watcher)
	}
}

func (r *criReceiver) discover(now time.Time) {
	gone, errs := r.tracker.Discover(now.UnixNano())
	for _, err := range errs {
		// A file that vanished between listing and opening is routine; anything else (no
		// permission, a corrupt compressed rotation) means lines that cannot be read.
		if errors.Is(err, fs.ErrNotExist) {
			r.logger.Debug("opening a log file failed", zap.Error(err))
		} else {
			r.logger.Warn("opening a log file failed", zap.Error(err))
		}
	}
	for _, s := range gone {
		if s.Replay != nil {
			// Over 4 KiB unfinished, named by offset in the file that is gone: not recoverable.
			r.logger.Warn("a log file was deleted while the collector was down; its unfinished entry is lost with it",
				zap.String("path", s.Path), zap.Int64s("entry_offsets", s.Replay))
		}
		if len(s.Joiner) > 1 {
			// Unfinished entries read before the stop live only in this checkpoint: they are
			// emitted (flagged flushed) before it is deleted.
			r.orphans = append(r.orphans, s)
			continue
		}
		r.deletes = append(r.deletes, keyOf(s))
		r.indexDirty = true
	}
	for _, rd := range r.tracker.Readers() {
		if _, ok := r.files[rd]; ok {
			continue
		}
		// A new reader: save its starting point at once, so that after a restart it is known
		// (a start_at end position must not become "read from the beginning").
		st := rd.State()
		fs := &fileState{
			key: readerKey(rd, now), resource: resourceFor(rd),
			committed: tracker.MarshalState(st), dirty: true, savedOffset: st.Offset, readOffset: st.Offset,
		}
		if r.gate.src != nil && rd.MetaOK {
			// Its Pod may be newer than the watch's latest event: the file is held, opened
			// but unread, until the Pod is known or metadata_wait passed (design.md).
			if p, ok := r.gate.pod(rd.Meta); ok {
				fs.resource.pod = p
			} else {
				fs.holdUntil = now.Add(r.cfg.MetadataWait)
			}
		}
		r.files[rd] = fs
		r.indexDirty = true
	}
}

// emitOrphans emits the unfinished entries of checkpoints whose file is gone, then deletes
// those checkpoints. A refused batch is offered again at the next cycle.
func (r *criReceiver) emitOrphans(ctx context.Context) {
	for len(r.orphans) > 0 && ctx.Err() == nil {
		s := r.orphans[0]
		now := time.Now()
		fs := &fileState{key: keyOf(s), resource: resourceAttrs{path: s.Path, meta: podpath.Meta{RestartCount: -1}}}
		if meta, ok := podpath.Parse(s.Path); ok {
			fs.resource.meta = meta
		}
		b := r.emitter.begin(fs, now)
		if err := r.tracker.PendingRecords(s, now.UnixNano(), r.emitter.sink); err == nil && b.len() > 0 {
			opCtx := r.obs.StartLogsOp(ctx)
			err := r.next.ConsumeLogs(opCtx, b.logs(&r.emitter, fs))
			r.obs.EndLogsOp(opCtx, "cri", b.len(), err)
			if err != nil && !consumererror.IsPermanent(err) {
				return // kept: offered again at the next cycle
			}
		}
		r.orphans = r.orphans[1:]
		r.deletes = append(r.deletes, fs.key)
		r.indexDirty = true
	}
}

// successorSettle is how long a rotated file whose successor exists must stay unchanged, from
// the successor's appearance or its own last growth, before it closes (drain_grace if that is
// shorter). containerd creates the new file before its old writer has written the lines it had
// already read from the container, so the renamed file can still grow after the new one exists.
const successorSettle = int64(500 * time.Millisecond)

// drained reports whether a draining reader may close at its end: once it has been unchanged
// for drain_grace, or, when its successor exists, for successorSettle since the later of the
// successor's appearance and its own last growth.
func drained(rd *tracker.Reader, now, grace int64) bool {
	if rd.Successor == nil {
		return now-rd.LastGrowth >= grace
	}
	if rd.SuccessorSeen == 0 {
		rd.SuccessorSeen = now
	}
	return now-max(rd.LastGrowth, rd.SuccessorSeen) >= min(grace, successorSettle)
}

// cycle gives every reader one turn. It reports whether any reader made progress.
func (r *criReceiver) cycle(ctx context.Context) bool {
	progress := false
	readers := append([]*tracker.Reader(nil), r.tracker.Readers()...)
	grace := int64(r.cfg.DrainGrace)
	for _, rd := range readers {
		if ctx.Err() != nil {
			return false
		}
		fs := r.files[rd]
		now := time.Now()
		if fs.pending != nil {
			if now.Before(fs.retryAt) {
				continue
			}
			if r.deliver(ctx, rd, fs, fs.pending, fs.closing) {
				progress = true
			}
			continue
		}
		if now.Before(fs.nextCheck) || rd.HeldBy != nil {
			continue // quiet, or a new file whose rotated predecessor is not done yet
		}
		if r.pendingBytes >= maxPendingBytes {
			continue // refused batches hold enough memory: only retry them until they drain
		}
		if r.gate.src != nil && !r.admit(ctx, rd, fs, now) {
			continue
		}
		closing := rd.Draining && drained(rd, now.UnixNano(), grace)
		b := r.emitter.begin(fs, now)
		changed, done, err := rd.Read(now.UnixNano(), r.tracker.Buffer(), closing, r.emitter.sink)
		if err != nil {
			r.tb.ReceiverCriLogReadErrors.Add(ctx, 1)
			r.logger.Warn("reading a log file failed", zap.String("path", rd.Path), zap.Error(err))
			continue
		}
		fs.readOffset = rd.Offset()
		// A file quiet for a while is looked at less often: with many idle files the fstat
		// calls are what an idle receiver spends.
		if !changed && !done && now.UnixNano()-rd.LastGrowth > int64(quietAfter) {
			fs.nextCheck = r.quietCheck(rd, fs, now)
		} else {
			fs.nextCheck = time.Time{}
			r.unwatch(fs)
		}
		if b.len() == 0 {
			if changed {
				r.commit(rd, fs)
				progress = true
			}
			if done {
				r.closeFile(rd, fs)
				continue
			}
			if !changed && r.parkable(rd, fs, now) {
				// Files wait for a slot and this one is idle, read to its end and saved: it
				// is closed, its checkpoint kept, and opened again when it grows.
				r.unwatch(fs)
				r.tracker.Park(rd, fs.key)
				delete(r.files, rd)
				r.slotFreed = true
				r.indexDirty = true
			}
			continue
		}
		progress = true
		r.deliver(ctx, rd, fs, b, done)
	}
	return progress
}

// admit takes the Pod's latest metadata for the file's next batch and reports whether the file
// is read now: not while it is held for its Pod's metadata (until metadata_wait), never once its
// Pod opted out (the file is closed unread from there). A Pod the source forgot (deleted while
// its file drains) keeps the metadata last seen.
func (r *criReceiver) admit(ctx context.Context, rd *tracker.Reader, fs *fileState, now time.Time) bool {
	p, ok := r.gate.pod(rd.Meta)
	if !ok {
		if fs.holdUntil.IsZero() {
			return true
		}
		if now.Before(fs.holdUntil) {
			return false
		}
		fs.holdUntil = time.Time{}
		r.tb.ReceiverCriLogMetadataWaits.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", "timeout")))
		return true
	}
	if p.Excluded {
		if !fs.holdUntil.IsZero() {
			r.tb.ReceiverCriLogMetadataWaits.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", "excluded")))
		}
		r.logger.Debug("the file's Pod opted out of log collection; closing it", zap.String("path", rd.Path))
		r.closeFile(rd, fs)
		return false
	}
	if !fs.holdUntil.IsZero() {
		fs.holdUntil = time.Time{}
		r.tb.ReceiverCriLogMetadataWaits.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", "found")))
	}
	fs.resource.pod = p
	return true
}

// parkable reports whether rd may be closed to free its slot: files are waiting, and rd has
// been idle at its end for five poll intervals, settled, with its state saved.
func (r *criReceiver) parkable(rd *tracker.Reader, fs *fileState, now time.Time) bool {
	return r.tracker.Limited() && fs.pending == nil && !fs.dirty &&
		now.UnixNano()-rd.LastGrowth >= int64(5*r.cfg.PollInterval) && rd.Settled()
}

// deliver offers a batch to the next consumer and applies the outcome. It reports success.
func (r *criReceiver) deliver(ctx context.Context, rd *tracker.Reader, fs *fileState, b *batch, last bool) bool {
	opCtx := r.obs.StartLogsOp(ctx)
	err := r.next.ConsumeLogs(opCtx, b.logs(&r.emitter, fs))
	r.obs.EndLogsOp(opCtx, "cri", b.len(), err)
	if err != nil && !consumererror.IsPermanent(err) {
		if ctx.Err() != nil {
			// Shutting down: the batch was not acknowledged and its state is not saved, so it
			// is read again after the restart.
			return false
		}
		r.tb.ReceiverCriLogBackpressureWaits.Add(ctx, 1)
		if fs.pending == nil {
			fs.pending = b.detach()
			r.pendingBytes += int64(len(fs.pending.arena))
			fs.closing = last
			fs.backoff = r.cfg.RetryOnFailure.InitialInterval
		} else {
			fs.backoff = min(2*fs.backoff, r.cfg.RetryOnFailure.MaxInterval)
		}
		fs.retryAt = time.Now().Add(fs.backoff)
		r.logger.Debug("next consumer refused a batch; pausing the file", zap.String("path", rd.Path),
			zap.Duration("retry_in", fs.backoff), zap.Error(err))
		return false
	}
	if err != nil {
		r.tb.ReceiverCriLogRecordsDropped.Add(ctx, int64(b.len()))
		r.logger.Error("next consumer rejected a batch permanently; dropping it", zap.String("path", rd.Path),
			zap.Int("records", b.len()), zap.Error(err))
	}
	if fs.pending != nil {
		r.pendingBytes -= int64(len(fs.pending.arena))
	}
	fs.pending = nil
	fs.closing = false
	r.commit(rd, fs)
	if last {
		r.closeFile(rd, fs)
	}
	return true
}

func (r *criReceiver) commit(rd *tracker.Reader, fs *fileState) {
	fs.committed = tracker.MarshalState(rd.State())
	fs.readOffset = rd.Offset()
	fs.dirty = true
	r.unsaved = true
}

func (r *criReceiver) closeFile(rd *tracker.Reader, fs *fileState) {
	succ := rd.Successor
	r.unwatch(fs)
	r.tracker.Remove(rd)
	if sfs := r.files[succ]; sfs != nil {
		r.commit(succ, sfs) // it may have taken over unfinished entries: saved with the close
	}
	r.slotFreed = true
	delete(r.files, rd)
	if r.client != nil {
		r.deletes = append(r.deletes, fs.key)
		r.indexDirty = true
	}
}

// saveCheckpoints writes dirty states, deletions and the index in one storage batch.
func (r *criReceiver) saveCheckpoints(ctx context.Context) error {
	if !r.unsaved && !r.indexDirty && len(r.deletes) == 0 {
		return nil // nothing changed since the last save (an idle node's every poll)
	}
	if r.client == nil {
		for _, fs := range r.files {
			fs.dirty = false
			fs.savedOffset = fs.readOffset
		}
		r.deletes = r.deletes[:0]
		r.unsaved, r.indexDirty = false, false
		return nil
	}
	var ops []*storage.Operation
	var saved []*fileState
	for _, fs := range r.files {
		if fs.dirty {
			ops = append(ops, storage.SetOperation(fs.key, fs.committed))
			saved = append(saved, fs)
		}
	}
	for _, k := range r.deletes {
		ops = append(ops, storage.DeleteOperation(k))
	}
	if r.indexDirty {
		keys := make([]string, 0, len(r.files))
		for _, fs := range r.files {
			keys = append(keys, fs.key)
		}
		// Checkpoints whose resume failed stay (index entry and value) for the next start.
		// So do those of files parked to free their slot.
		for _, s := range slices.Concat(r.tracker.Retained(), r.orphans, r.tracker.Parked()) {
			if k := keyOf(s); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
		ops = append(ops, storage.SetOperation(indexKey, []byte(strings.Join(keys, "\n"))))
	}
	if len(ops) == 0 {
		return nil
	}
	r.lastSave = time.Now()
	// Saving must finish even while shutting down: use a context that is not canceled.
	if err := r.client.Batch(context.WithoutCancel(ctx), ops...); err != nil {
		r.tb.ReceiverCriLogCheckpointErrors.Add(ctx, 1)
		return err
	}
	for _, fs := range saved {
		fs.dirty = false
		if st, err := tracker.UnmarshalState(fs.committed); err == nil {
			fs.savedOffset = st.Offset
		}
	}
	r.deletes = r.deletes[:0]
	r.indexDirty, r.unsaved = false, false
	return nil
}

// report turns tracker statistics into telemetry.
func (r *criReceiver) report(ctx context.Context) {
	s, p := r.tracker.Stats, r.lastStats
	r.lastStats = s
	tb := r.tb
	for _, c := range []struct {
		counter   metric.Int64Counter
		now, prev int64
	}{
		{tb.ReceiverCriLogLinesRead, s.Lines, p.Lines},
		{tb.ReceiverCriLogBytesRead, s.Bytes, p.Bytes},
		{tb.ReceiverCriLogRecordsEmitted, s.Records, p.Records},
		{tb.ReceiverCriLogPartialJoins, s.Joins, p.Joins},
		{tb.ReceiverCriLogTruncations, s.Truncations, p.Truncations},
		{tb.ReceiverCriLogTruncatedBytes, s.DroppedBytes, p.DroppedBytes},
		{tb.ReceiverCriLogFlushes, s.Flushes, p.Flushes},
		{tb.ReceiverCriLogParseFailures, s.ParseErrors, p.ParseErrors},
		{tb.ReceiverCriLogInvalidUtf8, s.InvalidUTF8, p.InvalidUTF8},
		{tb.ReceiverCriLogCopytruncations, s.CopyTruncations, p.CopyTruncations},
		{tb.ReceiverCriLogResumeFailures, s.ResumeFailures, p.ResumeFailures},
		{tb.ReceiverCriLogLongLines, s.LongLines, p.LongLines},
		{tb.ReceiverCriLogRotations, s.Rotations, p.Rotations},
	} {
		if d := c.now - c.prev; d != 0 {
			c.counter.Add(ctx, d)
		}
	}
	pn := r.tracker.Pinner()
	if v := pn.Vanished.Load(); v != r.vanished {
		tb.ReceiverCriLogFilesVanished.Add(ctx, v-r.vanished)
		r.vanished = v
	}
	if v := pn.Errors.Load(); v != r.openErrors {
		tb.ReceiverCriLogOpenErrors.Add(ctx, v-r.openErrors)
		r.openErrors = v
	}
	if r.watcher != nil {
		if v := r.watcher.Errors.Load(); v != r.watchErrors {
			tb.ReceiverCriLogWatchErrors.Add(ctx, v-r.watchErrors)
			r.watchErrors = v
			r.logger.Warn("inotify watches could not be placed (fs.inotify.max_user_watches?): unwatched directories are "+
				"searched for new files every discovery_interval, unwatched quiet files are polled",
				zap.Int64("failures", v), zap.Error(r.watcher.LastError()))
		}
	}
	// The gauges walk every file: recorded at most once a second, not at every poll.
	now := time.Now()
	if now.Sub(r.lastReport) < gaugeEvery {
		return
	}
	r.lastReport = now
	var lag int64
	for _, fs := range r.files {
		if fs.readOffset > fs.savedOffset {
			lag += fs.readOffset - fs.savedOffset
		}
	}
	tb.ReceiverCriLogCheckpointLag.Record(ctx, lag)
	var readLag, draining, drainingBytes int64
	for _, rd := range r.tracker.Readers() {
		if d := rd.Size - rd.Offset(); d > 0 {
			readLag += d
		}
		if rd.Draining {
			draining++
			drainingBytes += rd.Size
		}
	}
	tb.ReceiverCriLogReadLag.Record(ctx, readLag)
	tb.ReceiverCriLogFilesDraining.Record(ctx, draining)
	tb.ReceiverCriLogDrainingBytes.Record(ctx, drainingBytes)
	tb.ReceiverCriLogFilesOpen.Record(ctx, int64(r.tracker.Len()))
	tb.ReceiverCriLogFilesWaiting.Record(ctx, int64(r.tracker.Waiting))
	tb.ReceiverCriLogFilesExcluded.Record(ctx, r.tracker.Skipped.Load())
}

// readerKey is the storage key of a reader's checkpoint: the key it was resumed from, or a new
// one unique to this reader. A key is never derived from (device, inode) alone: a new file that
// takes a freed inode must not overwrite a checkpoint kept for the file that had it (one whose
// resume failed, or one waiting for its rotated file to be found).
func readerKey(rd *tracker.Reader, now time.Time) string {
	if rd.Key != "" {
		return rd.Key
	}
	return filePrefixKey + rd.ID.String() + "." + strconv.FormatInt(now.UnixNano(), 36)
}

// keyOf is the storage key a checkpoint was loaded from.
func keyOf(s tracker.State) string {
	if s.Key != "" {
		return s.Key
	}
	return filePrefixKey + s.ID.String()
}

// loadCheckpoints reads the index and every state it names. firstStart is true when there is
// no index at all.
func loadCheckpoints(ctx context.Context, client storage.Client) (states []tracker.State, firstStart bool, err error) {
	idx, err := client.Get(ctx, indexKey)
	if err != nil {
		return nil, false, fmt.Errorf("reading checkpoint index: %w", err)
	}
	if idx == nil {
		return nil, true, nil
	}
	var ops []*storage.Operation
	for _, k := range strings.Split(string(idx), "\n") {
		if strings.HasPrefix(k, filePrefixKey) {
			ops = append(ops, storage.GetOperation(k))
		}
	}
	if len(ops) > 0 {
		if err := client.Batch(ctx, ops...); err != nil {
			return nil, false, fmt.Errorf("reading checkpoints: %w", err)
		}
	}
	for _, op := range ops {
		if op.Value == nil {
			continue
		}
		s, err := tracker.UnmarshalState(op.Value)
		if err != nil {
			continue // unreadable: the file is read anew rather than skipped
		}
		s.Key = op.Key
		states = append(states, s)
	}
	return states, false, nil
}
