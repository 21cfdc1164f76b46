// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

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
