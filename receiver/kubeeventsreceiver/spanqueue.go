// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

// spanQueue decouples the traces pipeline from the Event records (design.md rule 9.7): the
// term hands it the spans of a batch and goes on; one sender delivers them to the traces
// consumer, retrying with backoff. It holds at most capacity spans: a batch that does not fit
// is dropped and counted, never waited for. The checkpoint never waits for it either.
type spanQueue struct {
	next     consumer.Traces
	tel      *metadata.TelemetryBuilder
	logger   *zap.Logger
	backoff  BackoffConfig
	capacity int

	ch     chan queuedSpans
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	queued int // spans in ch or being sent
	closed bool
}

type queuedSpans struct {
	traces ptrace.Traces
	n      int
}

func newSpanQueue(next consumer.Traces, capacity int, bc BackoffConfig, tel *metadata.TelemetryBuilder, logger *zap.Logger) *spanQueue {
	ctx, cancel := context.WithCancel(context.Background())
	q := &spanQueue{
		next: next, tel: tel, logger: logger, backoff: bc, capacity: capacity,
		ch: make(chan queuedSpans, capacity), ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
	go q.run()
	return q
}

// offer queues n spans, or drops and counts them when the queue is full; it never blocks.
func (q *spanQueue) offer(ctx context.Context, traces ptrace.Traces, n int) {
	q.mu.Lock()
	if q.closed || q.queued+n > q.capacity {
		q.mu.Unlock()
		q.tel.ReceiverKubeEventsSpansDropped.Add(ctx, int64(n))
		return
	}
	q.queued += n
	q.mu.Unlock()
	q.ch <- queuedSpans{traces, n} // cannot block: at most capacity batches of at least one span
}

func (q *spanQueue) run() {
	defer close(q.done)
	for {
		select {
		case <-q.ctx.Done():
			return
		case b := <-q.ch:
			sent := q.send(b)
			q.mu.Lock()
			q.queued -= b.n
			q.mu.Unlock()
			if !sent {
				q.tel.ReceiverKubeEventsSpansDropped.Add(context.Background(), int64(b.n))
				return
			}
		}
	}
}

// send delivers one batch, retrying with backoff until the consumer accepts or refuses it
// permanently (dropped: true is returned, the spans are counted); false when stopped first. A
// send is canceled at shutdown: spans, unlike records, do not hold the checkpoint (rule 9.7).
func (q *spanQueue) send(b queuedSpans) bool {
	bo := &backoff{initial: q.backoff.InitialInterval, max: q.backoff.MaxInterval}
	for {
		ctx, cancel := context.WithTimeout(q.ctx, finishTimeout)
		err := q.next.ConsumeTraces(ctx, b.traces)
		cancel()
		if err == nil {
			q.tel.ReceiverKubeEventsSpansEmitted.Add(q.ctx, int64(b.n))
			return true
		}
		q.tel.ReceiverKubeEventsConsumerErrors.Add(q.ctx, 1)
		if consumererror.IsPermanent(err) {
			q.logger.Error("the traces consumer refused spans permanently; dropped", zap.Int("spans", b.n), zap.Error(err))
			q.tel.ReceiverKubeEventsSpansDropped.Add(q.ctx, int64(b.n))
			return true
		}
		if !sleepCtx(q.ctx, bo.next(err)) {
			return false
		}
	}
}

// len is the number of spans queued or being sent.
func (q *spanQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

// shutdown stops taking spans, lets the sender deliver what is queued until ctx ends, then
// stops it and counts what is left as dropped.
func (q *spanQueue) shutdown(ctx context.Context) {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
wait:
	for q.len() > 0 {
		select {
		case <-ctx.Done():
			break wait
		case <-q.done:
			break wait
		case <-tick.C:
		}
	}
	q.cancel()
	<-q.done
	for {
		select {
		case b := <-q.ch:
			q.tel.ReceiverKubeEventsSpansDropped.Add(context.Background(), int64(b.n))
		default:
			return
		}
	}
}
