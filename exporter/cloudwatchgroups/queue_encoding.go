package cloudwatchgroups // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups"

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/klauspost/compress/s2"

	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	pdatareq "go.opentelemetry.io/collector/pdata/xpdata/request"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/batching"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/bufpool"
)

// queueMagic starts every request the exporter writes to a persistent queue; its last byte
// is the format version and changes with every change of the format (TestQueueFormatVersions
// pins the bytes of each version in testdata/queue). Version 2 is the magic, one mode byte
// (queueS2 or queuePlain) and the body, as one S2 block (github.com/klauspost/compress/s2)
// or as is:
//
//	uvarint streams, then per stream: uvarint len + group, uvarint len + stream,
//	uvarint events, then per event: varint timestamp (ms), uvarint len + message.
//
// Version 1 had no mode byte: first the plain body, later one S2 block under the same byte;
// both are still read.
//
// Compression matters more than its CPU: JSON messages shrink several times, and the
// storage rewrites each queued value several times (bbolt copies neighboring values when a
// leaf page changes), so every stored byte is paid for again and again.
var queueMagic = []byte("cwg\x02")

// Version 2 mode bytes.
const (
	queuePlain = 'p'
	queueS2    = 's'
)

// maxQueueRatio bounds how much larger than its S2 block a body may be. Marshal stores a body
// that compresses better than this uncompressed, so the decoder can reject a larger claim (a
// corrupt length) before allocating it: a stored item never makes the decoder allocate more
// than maxQueueRatio times its own size.
const maxQueueRatio = 64

// maxQueuedBody bounds the decoded size a queued item of version 1 may claim, on top of
// maxQueueRatioV1 times its size (version 1 wrote no mode byte and no ratio guarantee).
const (
	maxQueuedBody   = 1 << 30
	maxQueueRatioV1 = 1024
)

// queueEncoding writes requests to a persistent queue (sending_queue.storage) and reads
// them back. Items an earlier version queued as OTLP logs are read and converted.
type queueEncoding struct{ e *cwExporter }

// Marshal encodes the request; the context is not kept.
func (queueEncoding) Marshal(_ context.Context, r xexporterhelper.Request) ([]byte, error) {
	req, ok := r.(*eventsRequest)
	if !ok {
		return nil, fmt.Errorf("cloudwatch_groups: cannot queue a %T", r)
	}
	unpacked, decoded, err := req.unpack()
	if err != nil {
		return nil, err
	}
	b := marshalRequest(unpacked)
	// The queue keeps only b: the buffers the messages were in are free again. A request
	// route made is not used after Marshal (exporterhelper's persistent queue drops it once
	// stored); one read back from the queue stays packed, its decoded copy was unpacked's.
	releaseChunks(decoded)
	req.releaseArena()
	return b, nil
}

// Unmarshal decodes a queued request.
func (q queueEncoding) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	ctx := context.Background()
	if len(b) >= len(queueMagic) && string(b[:len(queueMagic)-1]) == string(queueMagic[:len(queueMagic)-1]) &&
		b[len(queueMagic)-1] >= 1 && b[len(queueMagic)-1] <= queueMagic[len(queueMagic)-1] {
		req, err := unmarshalRequest(b)
		return ctx, req, err
	}
	ctx, ld, err := pdatareq.UnmarshalLogs(b)
	if err != nil {
		return context.Background(), nil, fmt.Errorf("cloudwatch_groups: queued item is neither a request nor OTLP logs: %w", err)
	}
	req, err := q.e.convert(ctx, ld)
	return ctx, req, err
}

func marshalRequest(r *eventsRequest) []byte {
	n := len(queueMagic) + binary.MaxVarintLen64
	for _, s := range r.streams {
		n += len(s.id.group) + len(s.id.stream) + 3*binary.MaxVarintLen64
		for _, ev := range s.events {
			n += len(ev.Message) + 2*binary.MaxVarintLen64
		}
	}
	b := bufpool.Get(n)[:0] // n is enough: b never grows
	b = binary.AppendUvarint(b, uint64(len(r.streams)))
	for _, s := range r.streams {
		b = appendString(b, s.id.group)
		b = appendString(b, s.id.stream)
		b = binary.AppendUvarint(b, uint64(len(s.events)))
		for _, ev := range s.events {
			b = binary.AppendVarint(b, ev.Timestamp)
			b = appendString(b, ev.Message)
		}
	}
	// Compressed into a pooled buffer of the largest possible size, then copied into one of
	// the size it came to: the queue's copy is about a quarter of the body, not all of it.
	block := bufpool.Get(s2.MaxEncodedLen(len(b)))
	block = s2.Encode(block, b)
	var out []byte
	if len(b) > maxQueueRatio*len(block) {
		// Too compressible for the decoder's bound: store the body as is.
		out = make([]byte, 0, len(queueMagic)+1+len(b))
		out = append(append(append(out, queueMagic...), queuePlain), b...)
	} else {
		out = make([]byte, 0, len(queueMagic)+1+len(block))
		out = append(append(append(out, queueMagic...), queueS2), block...)
	}
	bufpool.Put(block)
	bufpool.Put(b) // copied into out (compressed or as is)
	return out
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errCorruptRequest = errors.New("cloudwatch_groups: corrupt queued request")

// unmarshalRequest decodes b, which starts with "cwg" and a version byte. Messages share the
// decoded body, which nothing else references.
func unmarshalRequest(b []byte) (*eventsRequest, error) {
	if len(b) < len(queueMagic)+1 {
		return nil, errCorruptRequest
	}
	rest := b[len(queueMagic):]
	switch b[len(queueMagic)-1] {
	case 1:
		// Version 1: an S2 block, or (before compression) the plain body.
		if body, err := decodeBlock(rest, min(maxQueuedBody, maxQueueRatioV1*len(rest))); err == nil {
			if req, err := decodeBody(body); err == nil {
				return req, nil
			}
		}
		return decodeBody(append([]byte(nil), rest...))
	case 2:
		switch rest[0] {
		case queuePlain:
			return decodeBody(append([]byte(nil), rest[1:]...))
		case queueS2:
			body, err := decodeBlock(rest[1:], maxQueueRatio*len(rest[1:]))
			if err != nil {
				return nil, err
			}
			req, err := decodeBody(body)
			if err != nil {
				bufpool.Put(body)
				return nil, err
			}
			// Checked in full above; the events wait compressed until they are sent.
			if pack(req, body, rest[1:]) {
				bufpool.Put(body)
			}
			return req, nil
		}
	}
	return nil, errCorruptRequest
}

// decodeBlock decompresses one S2 block whose decoded length may be at most limit, into a
// buffer of the pool.
func decodeBlock(block []byte, limit int) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil || n > limit {
		return nil, errCorruptRequest
	}
	buf := bufpool.Get(n)
	body, err := s2.Decode(buf, block)
	if err != nil {
		bufpool.Put(buf)
		return nil, errCorruptRequest
	}
	return body, nil
}

// decodeBody decodes the uncompressed body; the messages share body, which the caller must
// not change afterwards.
func decodeBody(body []byte) (*eventsRequest, error) {
	d := decoder{s: unsafe.String(unsafe.SliceData(body), len(body))} //nolint:gosec // body is owned here and never written again
	ns := d.uvarint()
	if d.err != nil || ns > uint64(len(d.s)) {
		return nil, errCorruptRequest
	}
	req := &eventsRequest{streams: make([]streamEvents, 0, ns)}
	for range ns {
		id := streamID{group: d.str(), stream: d.str()}
		ne := d.uvarint()
		if d.err != nil || ne > uint64(len(d.s)-d.off) { //nolint:gosec // off never passes len
			return nil, errCorruptRequest
		}
		evs := make([]batching.Event, ne)
		for i := range evs {
			evs[i].Timestamp = d.varint()
			evs[i].Message = d.str()
		}
		if d.err != nil {
			return nil, errCorruptRequest
		}
		req.append(id, evs)
	}
	if d.off != len(d.s) {
		return nil, errCorruptRequest
	}
	return req, nil
}

// decoder reads the fields of a queued request; the first error sticks.
type decoder struct {
	s   string
	off int
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := uvarint(d.s[d.off:])
	if n <= 0 {
		d.err = errCorruptRequest
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.s)-d.off) { //nolint:gosec // off never passes len
		d.err = errCorruptRequest
		return ""
	}
	end := d.off + int(n) //nolint:gosec // n is at most len(d.s) - d.off
	s := d.s[d.off:end]
	d.off = end
	return s
}

// uvarint is binary.Uvarint on a string.
func uvarint(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, -1
			}
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return 0, 0
}
