// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

import (
	"errors"
	"strconv"
	"unsafe"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/batching"
)

// packed is the messages of a request read back from the persistent queue, kept as the queue
// stored them (frames of S2 blocks, or of the messages as they are)
// while its events wait in the batcher's partitions and for a consumer: JSON messages
// compress several times, and a partition holds up to a whole batch per stream until it is
// full or flush_timeout passes.
// Sending decodes it (design.md, section 5a, "Packed while waiting").
type packed struct {
	block []byte // the frames of an item (checkFrames found them to make n bytes)
	n     int    // their decoded length
}

// A packed event's Ref holds its message's span in the decoded block: offset in the high 32
// bits, length in the low 32. Bodies of 4 GiB or more are never packed.
const spanBits = 32

// canPack says whether spans fit in an int (64-bit platforms).
const canPack = strconv.IntSize == 64

func spanOf(off, n int) int { return off<<spanBits | n }
func spanOff(ref int) int   { return ref >> spanBits }
func spanLen(ref int) int   { return ref & (1<<spanBits - 1) }

// unpack returns the request with every packed segment decoded and the segments of each
// stream joined, in order: what sending and the queue encoding work on. A request without
// packed segments is returned as is. Of frames, only those that hold the request's events are
// decoded. The decoded bodies are buffers of the pool, returned with the request: once
// nothing reads the request's messages any more, the caller may give them back
// (releaseChunks) or leave them to the garbage collector.
func (r *eventsRequest) unpack() (*eventsRequest, [][]byte, error) {
	// The span of the messages the request reads of each block.
	spans := map[*packed]*decodedSpan{}
	for _, s := range r.streams {
		if s.packed == nil {
			continue
		}
		d := spans[s.packed]
		if d == nil {
			d = &decodedSpan{lo: -1}
			spans[s.packed] = d
		}
		for _, ev := range s.events {
			off, n := spanOff(ev.Ref), spanLen(ev.Ref)
			if n == 0 {
				continue
			}
			if d.lo < 0 {
				d.lo, d.hi = off, off+n
			}
			d.lo, d.hi = min(d.lo, off), max(d.hi, off+n)
		}
	}
	if len(spans) == 0 {
		return r, nil, nil
	}
	var decoded [][]byte
	fail := func(err error) (*eventsRequest, [][]byte, error) {
		releaseChunks(decoded)
		return nil, nil, err
	}
	for p, d := range spans {
		if d.lo < 0 {
			continue // only empty messages
		}
		frames, err := decodeFrameSpan(p.block, d.lo, d.hi)
		if err != nil {
			return fail(err)
		}
		for _, f := range frames {
			decoded = append(decoded, f.b)
		}
		d.frames = frames
	}
	out := &eventsRequest{firstFailure: r.firstFailure, streams: make([]streamEvents, 0, len(r.streams))}
	for _, s := range r.streams {
		if s.packed == nil {
			out.append(s.id, s.events)
			continue
		}
		d := spans[s.packed]
		evs := make([]batching.Event, len(s.events))
		for i, ev := range s.events {
			evs[i] = batching.Event{Timestamp: ev.Timestamp, Unescaped: ev.Unescaped}
			if n := spanLen(ev.Ref); n > 0 {
				msg, ok := d.message(spanOff(ev.Ref), n)
				if !ok {
					return fail(errors.New("cloudwatch_groups: packed event outside its body"))
				}
				evs[i].Message = msg
			}
		}
		out.append(s.id, evs)
	}
	return out, decoded, nil
}

// decodedSpan is the part of a packed block's messages a request reads (lo to hi; lo is -1
// while it reads none), and once decoded, the frames that hold it.
type decodedSpan struct {
	lo, hi int
	frames []decodedFrame
	at     int // the frame the last message was in: the messages come in order
}

// message returns the message at off of length n, from the frame that holds all of it.
func (d *decodedSpan) message(off, n int) (string, bool) {
	if d.at >= len(d.frames) || off < d.frames[d.at].start {
		d.at = 0
	}
	for d.at < len(d.frames) && off >= d.frames[d.at].start+len(d.frames[d.at].b) {
		d.at++
	}
	if d.at == len(d.frames) || off < d.frames[d.at].start {
		return "", false
	}
	f := d.frames[d.at]
	off -= f.start
	if off+n > len(f.b) {
		return "", false
	}
	return unsafe.String(&f.b[off], n), true //nolint:gosec // b is owned by the request and never written while it lives
}
