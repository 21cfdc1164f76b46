// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

// keep applies the include and exclude lists.
func (t *term) keep(ev *event) bool {
	in, ex := t.cfg.Include, t.cfg.Exclude
	ok := (len(in.Reasons) == 0 || slices.Contains(in.Reasons, ev.Reason)) &&
		(len(in.Types) == 0 || slices.Contains(in.Types, ev.Type)) &&
		!slices.Contains(ex.Reasons, ev.Reason) && !slices.Contains(ex.Types, ev.Type)
	if !ok {
		t.tel.ReceiverKubeEventsEventsFiltered.Add(context.Background(), 1)
	}
	return ok
}

// emitRecords hands the log records of ts (the states series.emit selects) to the logs
// consumer, retrying refused batches with backoff, and the spans of ts (rule 9) to the span
// queue, which never waits (rule 9.7); false when ctx ended first. Called with t.mu held.
func (t *term) emitRecords(ctx context.Context, ts []transition) bool {
	if t.nextLogs != nil && !t.emitLogs(ctx, ts) {
		return false
	}
	if t.spanQ != nil {
		traces := ptrace.NewTraces()
		if n := t.spans.build(traces, ts); n > 0 {
			t.spanQ.offer(ctx, traces, n)
		}
	}
	return true
}

func (t *term) emitLogs(ctx context.Context, ts []transition) bool {
	selected := make([]transition, 0, len(ts))
	for _, tr := range ts {
		if t.emit[tr.State] {
			selected = append(selected, tr)
		}
	}
	if len(selected) == 0 {
		return true
	}
	now := t.now()
	logs := plog.NewLogs()
	t.builder.build(logs, selected, now)
	if !consume(ctx, t.cfg.ConsumerRetry, t.tel, t.logger, len(selected), func(ctx context.Context) error { return t.nextLogs.ConsumeLogs(ctx, logs) }) {
		return false
	}
	for _, tr := range selected {
		t.tel.ReceiverKubeEventsRecordsEmitted.Add(ctx, 1, metric.WithAttributes(attribute.String("state", tr.State.String())))
		if !tr.Event.Last.IsZero() {
			t.tel.ReceiverKubeEventsEmitLag.Record(ctx, now.Sub(tr.Event.Last).Milliseconds())
		}
	}
	return true
}

// consume calls send until the consumer accepts (or refuses permanently: the n items are
// dropped and logged); false when ctx ended first.
func consume(ctx context.Context, bc BackoffConfig, tel *metadata.TelemetryBuilder, logger *zap.Logger, n int, send func(context.Context) error) bool {
	b := &backoff{initial: bc.InitialInterval, max: bc.MaxInterval}
	for {
		// A send under way when the term ends is finished, not abandoned: an export canceled
		// after the data was delivered would be repeated by the next term (rule 8).
		sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		err := send(sendCtx)
		cancel()
		if err == nil {
			return true
		}
		tel.ReceiverKubeEventsConsumerErrors.Add(ctx, 1)
		if consumererror.IsPermanent(err) {
			logger.Error("the next consumer refused data permanently; dropped", zap.Int("items", n), zap.Error(err))
			return true
		}
		if !sleepCtx(ctx, b.next(err)) {
			return false
		}
	}
}

// emitAndSave emits ts and then moves the checkpoint: ns at rv (rv "" keeps it) and the series
// state; it is written now if the last write is checkpoint.interval old, else by flushLoop.
func (t *term) emitAndSave(ctx context.Context, ts []transition, ns, rv string) bool {
	if !t.emitRecords(ctx, ts) {
		return false
	}
	if t.cp == nil {
		t.cp = &checkpoint{ResourceVersions: map[string]string{}}
	}
	if rv != "" {
		t.cp.ResourceVersions[ns] = rv
	}
	t.dirty = true
	t.tel.ReceiverKubeEventsSeriesEvicted.Add(ctx, t.table.evicted)
	t.table.evicted = 0
	if t.now().Sub(t.lastSave) >= t.cfg.Checkpoint.Interval {
		t.save(ctx, finishTimeout)
	}
	return true
}

// save writes the checkpoint if it is behind (rule 5.5), merging with a concurrent write and
// stopping the term when a newer term fenced it (rule 5.7). Called with t.mu held.
func (t *term) save(ctx context.Context, timeout time.Duration) {
	if t.store == nil || t.fenced || !t.dirty || t.cp == nil {
		return
	}
	rvs := make(map[string]string, len(t.cp.ResourceVersions))
	for k, v := range t.cp.ResourceVersions {
		rvs[k] = v
	}
	cp := &checkpoint{Term: t.number, Holder: t.holder, ResourceVersions: rvs, Series: t.table.snapshot()}
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	saved, err := t.store.Save(saveCtx, cp)
	switch {
	case errors.Is(err, errFenced):
		t.fenced = true
		t.tel.ReceiverKubeEventsCheckpointFenced.Add(ctx, 1)
		t.logger.Warn("a newer leader wrote the checkpoint: this term is deposed and stops", zap.Int64("term", t.number))
		t.stop()
		return
	case err != nil:
		t.tel.ReceiverKubeEventsCheckpointErrors.Add(ctx, 1)
		t.logger.Warn("saving the checkpoint failed", zap.Error(err))
		return
	}
	t.dirty, t.lastSave = false, t.now()
	t.tel.ReceiverKubeEventsCheckpointWrites.Add(ctx, 1)
	t.tel.ReceiverKubeEventsCheckpointSize.Record(ctx, int64(len(saved.encode())))
	if saved != cp {
		// merged with an older term's late write: take up what it finished or opened
		for k, p := range saved.Series {
			if p.Term < t.number {
				t.table.absorb(k, p)
			}
		}
	}
}
