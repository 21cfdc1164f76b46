// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"go.uber.org/zap"

	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/batching"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/bufpool"
)

// queueMagic starts every request the exporter writes to a persistent queue; its last byte
// is the format version and changes with every change of the format (TestQueueFormatVersions
// pins the bytes of the current version in testdata/queue). Version 5 is the magic, the CRC-32C
// (Castagnoli, little-endian) of everything after it, and then the index and the messages:
//
//	the index's mode byte (queueS2, or queuePlain when it compresses more than
//	  maxQueueRatio times), uvarint len + the index as one S2 block
//	  (github.com/klauspost/compress/s2) or as it is:
//	  uvarint streams, then per stream: uvarint len + group, uvarint len + stream,
//	  uvarint events, then per event: varint timestamp (ms) less the stream's previous
//	  one (the first less 0), uvarint unescaped size (batching.Event.Unescaped), uvarint
//	  message length;
//	the messages (escaped, as the body carries them), one after the other, in frames
//	  of whole messages: a frame ends before the message that would take it past
//	  queueChunk bytes, and a message longer than that is a frame of its own. A frame
//	  is a mode byte (queueS2, or queuePlain when it compresses more than
//	  maxQueueRatio times), uvarint len + its messages as one S2 block or as they are.
//
// The index is a block of its own so that reading an item back decodes only the index (a
// few bytes per event) and checks the sum: the messages stay compressed, untouched, until
// they are sent (packed), and then only the frames that hold the events sent are decoded,
// each into a buffer of its own (no message is cut in two). Writing an item needs one frame
// and its block at a time, not the messages joined and a block of their whole size (for a
// full request, two buffers of a megabyte or more).
//
// Only this version is read. No earlier one was ever released (versions 1 to 4 lived only
// between commits before the first tag), so an item with another version byte, or without the
// magic (OTLP logs, say), is refused as unreadable: Unmarshal counts and logs it, and the
// queue drops it.
//
// Compression matters more than its CPU: JSON messages shrink several times, and the
// storage rewrites each queued value several times (bbolt copies neighboring values when a
// leaf page changes), so every stored byte is paid for again and again.
var queueMagic = []byte("cwg\x05")

// queueChunk is how many bytes of messages a frame of an item holds at most, unless
// it is one longer message. Container log messages repeat within a few hundred bytes (the
// resource, the attribute names), so 64 KiB compresses them about as well as the whole
// request does.
const queueChunk = 64 << 10

// Mode bytes of the index and of each frame.
const (
	queuePlain = 'p'
	queueS2    = 's'
)

// maxQueueRatio bounds how much larger than its S2 block a body may be. Marshal stores a body
// that compresses better than this uncompressed, so the decoder can reject a larger claim (a
// corrupt length) before allocating it: a stored item never makes the decoder allocate more
// than maxQueueRatio times its own size.
const maxQueueRatio = 64

// maxQueuedBody bounds the total length of the messages (and each unescaped size) an item's
// index may claim.
const maxQueuedBody = 1 << 30

// queueEncoding writes requests to a persistent queue (sending_queue.storage) and reads
// them back.
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
	req.origins.release(true)
	return b, nil
}

// Unmarshal decodes a queued request. An item it cannot read is counted and logged here:
// exporterhelper's persistent queue drops it without a word.
func (q queueEncoding) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	ctx := context.Background()
	req, err := unmarshalRequest(b)
	if err != nil {
		if q.e != nil {
			q.e.telemetry.ExporterCloudwatchGroupsQueueItemsUnreadable.Add(ctx, 1)
			q.e.logger.Error("A queued item cannot be read; the queue drops it", zap.Int("bytes", len(b)), zap.Error(err))
		}
		return ctx, nil, err
	}
	if q.e != nil {
		q.e.partials.enter(req)
	}
	return ctx, req, nil
}

func marshalRequest(r *eventsRequest) []byte {
	nIndex, nMsgs := binary.MaxVarintLen64, 0
	for _, s := range r.streams {
		nIndex += len(s.id.group) + len(s.id.stream) + 3*binary.MaxVarintLen64
		nIndex += len(s.events) * indexBytesPerEvent
		for _, ev := range s.events {
			nMsgs += len(ev.Message)
		}
	}
	index := bufpool.Get(nIndex)[:0] // rarely grows
	index = binary.AppendUvarint(index, uint64(len(r.streams)))
	for _, s := range r.streams {
		index = appendString(index, s.id.group)
		index = appendString(index, s.id.stream)
		index = binary.AppendUvarint(index, uint64(len(s.events)))
		prev := int64(0)
		for _, ev := range s.events {
			index = binary.AppendVarint(index, ev.Timestamp-prev)
			prev = ev.Timestamp
			index = binary.AppendUvarint(index, uint64(ev.Unescaped)) //nolint:gosec // never negative
			index = binary.AppendUvarint(index, uint64(len(ev.Message)))
		}
	}
	indexMode, indexData, indexBlock := compress(index) // a burst of like events compresses its index a lot
	// The item is written into a pooled buffer (messages usually compress about four times)
	// and then copied into one of its own size: the queue keeps only that copy.
	w := frameWriter{out: bufpool.Get(len(queueMagic) + 4 + 1 + binary.MaxVarintLen64 + len(indexData) + nMsgs/4 + 64)[:0]}
	w.out = append(w.out, queueMagic...)
	w.out = append(w.out, 0, 0, 0, 0)
	sum := len(w.out)
	w.out = append(w.out, indexMode)
	w.out = binary.AppendUvarint(w.out, uint64(len(indexData)))
	w.out = append(w.out, indexData...)
	bufpool.Put(indexBlock)
	bufpool.Put(index)
	if nMsgs > 0 {
		w.chunk = bufpool.Get(min(nMsgs, queueChunk))[:0]
		w.block = bufpool.Get(s2.MaxEncodedLen(min(nMsgs, queueChunk)))
		for _, s := range r.streams {
			for _, ev := range s.events {
				w.write(ev.Message)
			}
		}
		w.flush()
		bufpool.Put(w.chunk)
		bufpool.Put(w.block)
	}
	binary.LittleEndian.PutUint32(w.out[sum-4:sum], crc32.Checksum(w.out[sum:], castagnoli))
	out := append([]byte(nil), w.out...)
	bufpool.Put(w.out)
	return out
}

// frameWriter gathers the messages of an item into frames of whole messages (at most
// queueChunk bytes, or one longer message) and appends each to out; chunk and block are
// pooled buffers of a frame's messages and of its S2 block.
type frameWriter struct {
	out, chunk, block []byte
}

func (w *frameWriter) write(msg string) {
	if len(w.chunk)+len(msg) > queueChunk {
		w.flush()
	}
	if len(msg) <= queueChunk {
		w.chunk = append(w.chunk, msg...)
		return
	}
	mode, data, block := compress(unsafe.Slice(unsafe.StringData(msg), len(msg))) //nolint:gosec // only read
	w.appendFrame(mode, data)
	bufpool.Put(block)
}

// flush appends the messages gathered so far as a frame, if there are any.
func (w *frameWriter) flush() {
	if len(w.chunk) > 0 {
		w.appendFrame(compressInto(w.block, w.chunk))
		w.chunk = w.chunk[:0]
	}
}

// appendFrame appends a frame of mode and data.
func (w *frameWriter) appendFrame(mode byte, data []byte) {
	if need := len(w.out) + 1 + binary.MaxVarintLen64 + len(data); need > cap(w.out) {
		grown := bufpool.Get(max(need, 2*cap(w.out)))[:len(w.out)]
		copy(grown, w.out)
		bufpool.Put(w.out)
		w.out = grown
	}
	w.out = append(w.out, mode)
	w.out = binary.AppendUvarint(w.out, uint64(len(data)))
	w.out = append(w.out, data...)
}

// compress returns b as one S2 block (mode queueS2), or b itself (queuePlain) when it
// compresses more than the decoder's bound, maxQueueRatio; and the pooled buffer the block
// was written to, for the caller to give back once it has copied what it keeps.
func compress(b []byte) (mode byte, data, pooled []byte) {
	pooled = bufpool.Get(s2.MaxEncodedLen(len(b)))
	mode, data = compressInto(pooled, b)
	return mode, data, pooled
}

// compressInto is compress with the block written to dst, which is at least
// s2.MaxEncodedLen(len(b)) long. It only reads b.
func compressInto(dst, b []byte) (mode byte, data []byte) {
	block := s2.Encode(dst, b)
	if len(b) > maxQueueRatio*len(block) {
		return queuePlain, b
	}
	return queueS2, block
}

// indexBytesPerEvent is room for an event's index entry as it usually is: a timestamp of
// this century in milliseconds (6 bytes) and two sizes below 2 MiB (3 bytes each). The index
// grows past it only for events that are not.
const indexBytesPerEvent = 12

// castagnoli is the CRC-32C table (the CPU's crc32 instruction computes it where it has one).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errCorruptRequest = errors.New("cloudwatch_groups: corrupt queued request")

// errUnknownFormat is the error for an item without the current magic: another version of
// the format, or something else entirely (OTLP logs, say).
var errUnknownFormat = errors.New("cloudwatch_groups: queued item is not of this build's format")

// unmarshalRequest decodes b, an item of the current version (queueMagic). The events keep
// their messages packed in b's frames until they are sent.
func unmarshalRequest(b []byte) (*eventsRequest, error) {
	if !bytes.HasPrefix(b, queueMagic) {
		if len(b) >= len(queueMagic) && bytes.HasPrefix(b, queueMagic[:len(queueMagic)-1]) {
			return nil, fmt.Errorf("%w: version %d, this build reads only version %d", errUnknownFormat, b[len(queueMagic)-1], queueMagic[len(queueMagic)-1])
		}
		return nil, errUnknownFormat
	}
	return unmarshalV5(b[len(queueMagic):])
}

// unmarshalV5 decodes an item after the magic: it checks the sum, parses the index
// and the frames' headers, and keeps the frames packed as they are, without decoding them.
func unmarshalV5(rest []byte) (*eventsRequest, error) {
	if len(rest) < 4 {
		return nil, errCorruptRequest
	}
	sum, body := binary.LittleEndian.Uint32(rest[:4]), rest[4:]
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, errCorruptRequest
	}
	streams, total, payload, err := readIndex(body)
	if err != nil {
		return nil, err
	}
	if err := checkFrames(payload, total, streams); err != nil {
		return nil, err
	}
	return packOrDecode(streams, &packed{block: payload, n: total})
}

// readIndex reads the index of an item (its mode byte, length and data) from
// the start of body, and returns its streams, the messages' total length, and the rest of
// body: the messages.
func readIndex(body []byte) ([]streamEvents, int, []byte, error) {
	if len(body) == 0 {
		return nil, 0, nil, errCorruptRequest
	}
	indexMode, body := body[0], body[1:]
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(len(body)-k) { //nolint:gosec // k is positive
		return nil, 0, nil, errCorruptRequest
	}
	indexData, payload := body[k:k+int(n)], body[k+int(n):] //nolint:gosec // n is at most len(body)-k
	var index []byte
	switch indexMode {
	case queueS2:
		b, err := decodeBlock(indexData, maxQueueRatio*len(indexData))
		if err != nil {
			return nil, 0, nil, err
		}
		defer bufpool.Put(b) // decodeIndex copies what it keeps
		index = b
	case queuePlain:
		index = indexData
	default:
		return nil, 0, nil, errCorruptRequest
	}
	streams, total, err := decodeIndex(unsafe.String(unsafe.SliceData(index), len(index))) //nolint:gosec // index is never written
	return streams, total, payload, err
}

// packOrDecode makes the request of streams (events with their message lengths in Ref) and
// their messages in p: packed, or decoded at once where spans do not fit in an int.
func packOrDecode(streams []streamEvents, p *packed) (*eventsRequest, error) {
	if !canPack || p.n >= 1<<spanBits {
		msgs, err := decodeFrames(p.block, p.n)
		if err != nil {
			return nil, err
		}
		return withMessages(streams, msgs), nil
	}
	off := 0
	req := &eventsRequest{streams: make([]streamEvents, 0, len(streams))}
	for _, s := range streams {
		for i := range s.events {
			n := s.events[i].Ref
			s.events[i].Ref = spanOf(off, n)
			off += n
		}
		s.packed = p
		req.appendSegment(s)
	}
	return req, nil
}

// checkFrames checks, from their headers only, that the frames of an item decode to
// total bytes, that none claims more than maxQueueRatio times its own size, and that each
// ends where a message of streams (lengths in Ref, in order) ends: no message is cut in two.
func checkFrames(payload []byte, total int, streams []streamEvents) error {
	n := 0
	si, ei, msgEnd := 0, 0, 0 // the next message and where the messages before it end
	err := eachFrame(payload, func(mode byte, data []byte) error {
		dl, err := frameLen(mode, data)
		if err != nil || dl > total-n {
			return errCorruptRequest
		}
		n += dl
		for msgEnd < n {
			for si < len(streams) && ei == len(streams[si].events) {
				si, ei = si+1, 0
			}
			if si == len(streams) {
				return errCorruptRequest
			}
			msgEnd += streams[si].events[ei].Ref
			ei++
		}
		if msgEnd != n {
			return errCorruptRequest // a message across the frame's end
		}
		return nil
	})
	if err != nil || n != total {
		return errCorruptRequest
	}
	return nil
}

// frameLen returns the decoded length of a frame, from its header; an S2 block may not claim
// more than maxQueueRatio times its own size.
func frameLen(mode byte, data []byte) (int, error) {
	switch mode {
	case queueS2:
		dl, err := s2.DecodedLen(data)
		if err != nil || dl > maxQueueRatio*len(data) {
			return 0, errCorruptRequest
		}
		return dl, nil
	case queuePlain:
		return len(data), nil
	}
	return 0, errCorruptRequest
}

// eachFrame calls fn with the mode and data of each frame of payload, in order, and stops at
// its first error.
func eachFrame(payload []byte, fn func(mode byte, data []byte) error) error {
	for len(payload) > 0 {
		n, k := binary.Uvarint(payload[1:])
		if k <= 0 || n > uint64(len(payload)-1-k) { //nolint:gosec // k is positive
			return errCorruptRequest
		}
		start := 1 + k
		if err := fn(payload[0], payload[start:start+int(n)]); err != nil { //nolint:gosec // n is at most len(payload)-1-k
			return err
		}
		payload = payload[start+int(n):] //nolint:gosec // as above
	}
	return nil
}

// decodeFrames decodes all the frames of payload (which checkFrames accepted) one after the
// other into a buffer of the pool.
func decodeFrames(payload []byte, total int) ([]byte, error) {
	buf := bufpool.Get(total)
	off := 0
	err := eachFrame(payload, func(mode byte, data []byte) error {
		n, err := decodeFrame(mode, data, buf[off:])
		off += n
		return err
	})
	if err != nil || off != total {
		bufpool.Put(buf)
		return nil, errCorruptRequest
	}
	return buf, nil
}

// decodedFrame is a frame decoded into a buffer of the pool; start is the offset of its
// first byte among the item's messages.
type decodedFrame struct {
	start int
	b     []byte
}

// decodeFrameSpan decodes the frames of payload (which checkFrames accepted) that hold the
// messages' bytes from lo to hi, each into a buffer of the pool of its own. Sending decodes
// only the frames of the events it sends: a request cut into two batches does not decode
// all of it twice, and the buffers are about one size.
func decodeFrameSpan(payload []byte, lo, hi int) ([]decodedFrame, error) {
	var frames []decodedFrame
	at := 0
	err := eachFrame(payload, func(mode byte, data []byte) error {
		dl, err := frameLen(mode, data)
		if err != nil {
			return err
		}
		from := at
		at += dl
		if from >= hi || from+dl <= lo {
			return nil
		}
		buf := bufpool.Get(dl)
		frames = append(frames, decodedFrame{start: from, b: buf})
		_, err = decodeFrame(mode, data, buf)
		return err
	})
	if err != nil || hi > at {
		for _, f := range frames {
			bufpool.Put(f.b)
		}
		return nil, errCorruptRequest
	}
	return frames, nil
}

// decodeFrame decodes one frame to the start of dst and returns its decoded length.
func decodeFrame(mode byte, data, dst []byte) (int, error) {
	dl, err := frameLen(mode, data)
	if err != nil || dl > len(dst) {
		return 0, errCorruptRequest
	}
	if mode == queuePlain {
		return copy(dst, data), nil
	}
	dst = dst[:dl:dl]
	got, err := s2.Decode(dst, data)
	if err != nil || len(got) != dl || (dl > 0 && &got[0] != &dst[0]) {
		return 0, errCorruptRequest
	}
	return dl, nil
}

// decodeIndex decodes an item's index into the streams' events, each without its text and
// with its message's length in Ref, and returns the messages' total length.
func decodeIndex(index string) ([]streamEvents, int, error) {
	d := decoder{s: index}
	ns := d.uvarint()
	if d.err != nil || ns > uint64(len(d.s)) {
		return nil, 0, errCorruptRequest
	}
	streams := make([]streamEvents, 0, ns)
	total := 0
	for range ns {
		// The names are copies: nothing of the request keeps the item alive but the block.
		id := streamID{group: strings.Clone(d.str()), stream: strings.Clone(d.str())}
		ne := d.uvarint()
		if d.err != nil || ne > uint64(len(d.s)-d.off) { //nolint:gosec // off never passes len
			return nil, 0, errCorruptRequest
		}
		evs := make([]batching.Event, ne)
		prev := int64(0)
		for i := range evs {
			evs[i].Timestamp = prev + d.varint()
			prev = evs[i].Timestamp
			evs[i].Unescaped = d.size()
			n := d.uvarint()
			if d.err != nil || n > uint64(maxQueuedBody-total) || (evs[i].Unescaped > 0 && uint64(evs[i].Unescaped) >= n) {
				return nil, 0, errCorruptRequest
			}
			evs[i].Ref = int(n) //nolint:gosec // at most maxQueuedBody
			total += int(n)     //nolint:gosec // as above
		}
		streams = append(streams, streamEvents{id: id, events: evs})
	}
	if d.off != len(d.s) {
		return nil, 0, errCorruptRequest
	}
	return streams, total, nil
}

// withMessages gives events their messages, one after the other in msgs, which nothing else
// writes: each event holds its message's length in Ref and its size once unescaped in
// Unescaped (zero: the length).
func withMessages(streams []streamEvents, msgs []byte) *eventsRequest {
	all := unsafe.String(unsafe.SliceData(msgs), len(msgs)) //nolint:gosec // never written again
	req := &eventsRequest{streams: make([]streamEvents, 0, len(streams))}
	off := 0
	for _, s := range streams {
		for i := range s.events {
			ev := &s.events[i]
			n, size := ev.Ref, ev.Unescaped
			if size == 0 {
				size = n
			}
			*ev = batching.Event{Timestamp: ev.Timestamp}.WithMessage(all[off:off+n], size)
			off += n
		}
		req.appendSegment(s)
	}
	return req
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

// size reads an unescaped size, which is below the length of its message's text (an escape
// is longer than what it stands for); the caller checks it against the message.
func (d *decoder) size() int {
	n := d.uvarint()
	if n > maxQueuedBody {
		d.err = errCorruptRequest
		return 0
	}
	return int(n)
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
