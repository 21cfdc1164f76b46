// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/podpath"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/tracker"
)

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
