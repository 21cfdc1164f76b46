// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/tracker"
)

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
