// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/batching"
)

// eventsRequest is what the exporter queues and sends: records already routed to their
// stream and encoded as CloudWatch events. Its size in bytes is the CloudWatch size (message
// bytes plus 26 per event), and the batcher partitions requests by stream, so a batch of
// max_size 1,048,576 bytes is one full PutLogEvents call. See design.md, "Requests".
type eventsRequest struct {
	streams []streamEvents
	bytes   int
	events  int
	// firstFailure is when a push of these events first failed; the retry budget
	// (retry_on_failure.max_elapsed_time) counts from there. Zero for a fresh request.
	firstFailure time.Time
	// arena holds the chunks of the message arena route wrote this request's messages to,
	// until enter hands them to the request's origin.
	arena [][]byte
	// gate counts the request while the batcher keeps it as a partition's batch (held, in
	// the queue's units); ready marks a piece the gate sends at once (partials.go).
	gate  *partialGate
	held  int64
	ready bool
	// origins are the queue items the request holds events of: a partial batch is counted by
	// their whole size, which the queue keeps until the batch is sent.
	origins origins
}

// streamEvents are events of one request for one stream, in arrival order. A stream's
// events read back from the persistent queue stay packed while they wait in the batcher
// (see packed); a request holds one segment per stream and packed block, in order.
type streamEvents struct {
	id     streamID
	events []batching.Event
	// packed, when set, holds the messages: each event's Message is empty and its Ref the
	// span of its message in the packed body (spanOf). Nil: the events carry their messages.
	packed *packed
}

// size is the CloudWatch size of event i. A packed event without escapes has its message's
// length in its span.
func (s *streamEvents) size(i int) int {
	ev := &s.events[i]
	if s.packed != nil && ev.Unescaped == 0 {
		return spanLen(ev.Ref) + batching.EventOverhead
	}
	return ev.Size()
}

// bytes is the CloudWatch size of all its events.
func (s *streamEvents) bytes() int {
	if s.packed == nil {
		return batching.Bytes(s.events)
	}
	n := 0
	for i := range s.events {
		n += s.size(i)
	}
	return n
}

// slice returns events [lo, hi) as a segment of their own; the capped slice keeps a later
// append to it from writing into the events that follow.
func (s *streamEvents) slice(lo, hi int) streamEvents {
	return streamEvents{id: s.id, events: s.events[lo:hi:hi], packed: s.packed}
}

var (
	_ xexporterhelper.Request             = (*eventsRequest)(nil)
	_ xexporterhelper.RequestErrorHandler = (*eventsRequest)(nil)
)

// ItemsCount is the number of events.
func (r *eventsRequest) ItemsCount() int { return r.events }

// BytesSize is the CloudWatch size of the events. A piece the partial gate marked ready
// reports at least the batch's min_size, which is what makes exporterhelper's batcher send it
// now instead of keeping it for flush_timeout (partials.go); the queue sizes requests before
// they reach the batcher, so its accounting never sees that.
func (r *eventsRequest) BytesSize() int {
	if r.ready && r.gate != nil && int64(r.bytes) < r.gate.minSize {
		return int(r.gate.minSize)
	}
	return r.bytes
}

// append adds events of stream id, after the events the request already holds for it.
func (r *eventsRequest) append(id streamID, evs []batching.Event) {
	r.appendSegment(streamEvents{id: id, events: evs})
}

// appendSegment adds a segment's events after the events the request already holds for its
// stream: into that stream's last segment when both are unpacked or share a packed body,
// else as a new segment.
func (r *eventsRequest) appendSegment(s streamEvents) {
	if len(s.events) == 0 {
		return
	}
	r.events += len(s.events)
	r.bytes += s.bytes()
	for i := len(r.streams) - 1; i >= 0; i-- {
		if r.streams[i].id == s.id {
			if r.streams[i].packed == s.packed {
				r.streams[i].events = append(r.streams[i].events, s.events...)
				return
			}
			break
		}
	}
	r.streams = append(r.streams, s)
}

// partitionKey names the request's stream when it has a single one; requests that mix
// streams share the empty key.
func (r *eventsRequest) partitionKey() string {
	if len(r.streams) == 0 {
		return ""
	}
	id := r.streams[0].id
	for _, s := range r.streams[1:] {
		if s.id != id {
			return ""
		}
	}
	return id.group + "\x00" + id.stream
}

// MergeSplit appends other's events to r, then cuts r into requests of at most maxSize
// (events or CloudWatch bytes, by sizer). Every returned request but the last is full; the
// last holds the rest. An event larger than maxSize on its own travels alone.
func (r *eventsRequest) MergeSplit(_ context.Context, maxSize int, szt exporterhelper.RequestSizerType, other xexporterhelper.Request) ([]xexporterhelper.Request, error) {
	gate := r.gate
	if other != nil {
		o, ok := other.(*eventsRequest)
		if !ok {
			return nil, errors.New("cloudwatch_groups: cannot merge a foreign request")
		}
		// r is the batch the partition kept: it is no longer a partial batch of its own.
		gate.release(r)
		if gate == nil {
			gate = o.gate
		}
		for _, s := range o.streams {
			r.appendSegment(s)
		}
		r.origins.add(o.origins)
		*o = eventsRequest{}
	}
	items := false
	switch szt {
	case exporterhelper.RequestSizerTypeBytes:
	case exporterhelper.RequestSizerTypeItems:
		items = true
	default:
		return nil, errors.New("cloudwatch_groups: unsupported sizer")
	}
	size := r.bytes
	if items {
		size = r.events
	}
	if maxSize <= 0 || size <= maxSize {
		r.gate = gate
		gate.settle(r)
		return []xexporterhelper.Request{r}, nil
	}

	var out []xexporterhelper.Request
	cur := &eventsRequest{gate: gate}
	curSize := 0
	for _, s := range r.streams {
		start := 0
		for i := range s.events {
			u := 1
			if !items {
				u = s.size(i)
			}
			if curSize > 0 && curSize+u > maxSize {
				cur.appendSegment(s.slice(start, i))
				out = append(out, cur)
				cur, curSize, start = &eventsRequest{gate: gate}, 0, i
			}
			curSize += u
		}
		cur.appendSegment(s.slice(start, len(s.events)))
	}
	if cur.events > 0 {
		out = append(out, cur)
	}
	if len(out) > 0 {
		// The pieces hold the queue items (origins.go) their events come from; with streams
		// mixed the events are not cut in the items' order (nor when some events have no
		// item), so each holds all of them.
		var held []origins
		if r.partitionKey() != "" && r.origins.events() == r.events {
			counts := make([]int, len(out))
			for i, p := range out {
				counts[i] = p.(*eventsRequest).events
			}
			held = r.origins.split(counts)
		} else {
			held = r.origins.share(len(out))
		}
		for i, p := range out {
			p.(*eventsRequest).origins = held[i]
		}
		gate.settle(out[len(out)-1].(*eventsRequest))
	}
	*r = eventsRequest{}
	return out, nil
}

// OnError returns what is left to send after a failed push: only the events of the batches
// that failed, when the push says which; otherwise the whole request.
func (r *eventsRequest) OnError(err error) xexporterhelper.Request {
	var pf *partialFailure
	if errors.As(err, &pf) && pf.rest != nil {
		return pf.rest
	}
	return r
}

// partialFailure is a push error that carries the events still to be sent.
type partialFailure struct {
	err  error
	rest *eventsRequest
}

func (p *partialFailure) Error() string { return p.err.Error() }
func (p *partialFailure) Unwrap() error { return p.err }

// streamPartitioner keys a request by its stream, so exporterhelper's batcher collects each
// stream's events separately.
type streamPartitioner struct{}

// GetKey returns the request's partition key.
func (streamPartitioner) GetKey(_ context.Context, req xexporterhelper.Request) string {
	if r, ok := req.(*eventsRequest); ok {
		return r.partitionKey()
	}
	return ""
}
