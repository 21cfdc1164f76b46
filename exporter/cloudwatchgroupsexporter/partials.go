// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

import (
	"sync/atomic"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// partialGate keeps the partial batches exporterhelper's batcher holds, one per stream, from
// filling the bounded queue (design.md, section 5b). A queue item stays in the queue's size
// until every batch that took events from it is sent, so without the gate a queue smaller
// than the streams' partial batches fills with them, the producer blocks, and nothing moves
// until flush_timeout sends them: a throughput cliff on a timer.
//
// The gate counts what partial batches hold, in the queue's units, and never lets it pass
// budget (half the queue): a piece that would stay behind as a partition's batch beyond the
// budget is marked ready and goes at once. The rest of the queue is always requests being
// sent or waiting for a sender, each of which frees its space when it is done, which wakes a
// producer blocked on the queue at once.
type partialGate struct {
	budget int64
	// queueSizer is the unit of queue_size and budget; minSize is the batch's min_size in
	// bytes, the batcher's flush decision.
	queueSizer exporterhelper.RequestSizerType
	minSize    int64
	held       atomic.Int64
	// heldEvents is the number of events in the partial batches.
	heldEvents atomic.Int64
}

// newPartialGate returns the gate for the queue and batch configuration, or nil when there
// are no partial batches to keep in bounds: no queue, no batching, or a batch sized in events
// (a ready request can only report a full batch in bytes, see eventsRequest.BytesSize).
func newPartialGate(cfg *Config) *partialGate {
	if !cfg.QueueConfig.HasValue() {
		return nil
	}
	q := cfg.QueueConfig.Get()
	if !q.Batch.HasValue() || q.QueueSize <= 0 {
		return nil
	}
	b := q.Batch.Get()
	if b.Sizer != exporterhelper.RequestSizerTypeBytes || b.MinSize <= 0 {
		return nil
	}
	return &partialGate{budget: q.QueueSize / 2, queueSizer: q.Sizer, minSize: b.MinSize}
}

// units is r's size in the queue's unit.
func (g *partialGate) units(r *eventsRequest) int64 {
	switch g.queueSizer {
	case exporterhelper.RequestSizerTypeItems:
		return int64(r.events)
	case exporterhelper.RequestSizerTypeRequests:
		return 1
	default:
		return int64(r.bytes)
	}
}

// settle is called with the last piece of a merge and split: the batcher keeps it as its
// partition's batch when it is below min_size. It is counted then, or, when the budget is
// spent, marked ready so the batcher sends it now.
func (g *partialGate) settle(last *eventsRequest) {
	if g == nil {
		return
	}
	last.ready = false
	if int64(last.bytes) >= g.minSize {
		return
	}
	// The queue keeps whole items: a piece holding the last events of an item holds it all.
	u := max(last.origins.units, g.units(last))
	if g.held.Add(u) > g.budget {
		g.held.Add(-u)
		last.ready = true
		return
	}
	last.held = u
	g.heldEvents.Add(int64(last.events))
}

// release uncounts r when it was kept as a partition's batch: it is being merged into, or
// sent (flush_timeout, shutdown).
func (g *partialGate) release(r *eventsRequest) {
	if g == nil || r.held == 0 {
		return
	}
	g.held.Add(-r.held)
	g.heldEvents.Add(-int64(r.events))
	r.held = 0
}
