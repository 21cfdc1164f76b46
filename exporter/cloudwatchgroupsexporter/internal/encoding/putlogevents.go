// SPDX-License-Identifier: Apache-2.0

package encoding

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/bufpool"
)

// PutLogEventsBody is the awsJson1_1 body of a PutLogEvents request, the same document the
// SDK's serializer writes, produced as it is read: no buffer ever holds the whole body. The
// events' messages are already escaped (AppendMessage's form, or Escape's) and are copied as
// they are; the group and stream names are escaped once, when the body is made.
//
// A call reads it twice, for SigV4's payload hash and then in the transport, seeking back to
// its start in between. It is not safe for concurrent use.
type PutLogEventsBody struct {
	head   []byte // `{"logGroupName":...,"logEvents":[`
	events []types.InputLogEvent
	size   int

	// The read position: off bytes are read; what is left of the current piece is open,
	// then msg, then end; next is the event after the current one.
	off  int
	next int
	open []byte
	msg  string
	end  string
	done bool // the closing `]}` is under way
	// opening holds the current event's opening, `,{"timestamp":N,"message":"`.
	opening [48]byte
}

// The fixed parts of a body.
const (
	bodyGroup     = `{"logGroupName":`
	bodyStream    = `,"logStreamName":`
	bodyEvents    = `,"logEvents":[`
	bodyEnd       = `]}`
	eventTime     = `"timestamp":`
	eventMessage  = `"message":"`
	eventEnd      = `"}`
	eventEndEmpty = `}`
)

// NewPutLogEventsBody returns the body of a PutLogEvents call of these events, at its start.
// The events and their messages must not change while it is read.
func NewPutLogEventsBody(group, stream string, events []types.InputLogEvent) *PutLogEventsBody {
	head := make([]byte, 0, len(bodyGroup)+len(bodyStream)+len(bodyEvents)+len(group)+len(stream)+16)
	head = append(head, bodyGroup...)
	head = appendString(head, group)
	head = append(head, bodyStream...)
	head = appendString(head, stream)
	head = append(head, bodyEvents...)
	size := len(head) + len(bodyEnd)
	for i := range events {
		size += eventSize(&events[i])
	}
	if len(events) > 1 {
		size += len(events) - 1 // the commas between events
	}
	b := &PutLogEventsBody{head: head, events: events, size: size}
	b.rewind()
	return b
}

// eventSize is the length of e's object in a body.
func eventSize(e *types.InputLogEvent) int {
	n := len(eventEndEmpty) + 1 // '{' and '}'
	if e.Timestamp != nil {
		n += len(eventTime) + decimalLen(*e.Timestamp)
		if e.Message != nil {
			n++ // ','
		}
	}
	if e.Message != nil {
		n += len(eventMessage) + len(*e.Message) + 1 // and the closing '"'
	}
	return n
}

// decimalLen is the length of strconv.FormatInt(v, 10).
func decimalLen(v int64) int {
	n := 1
	u := uint64(v) //nolint:gosec // two's complement: negated below for a negative v
	if v < 0 {
		n++
		u = -u
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}

// Len returns the number of bytes not yet read, as bytes.Reader's Len does; the SDK takes
// the request's Content-Length from it.
func (b *PutLogEventsBody) Len() int {
	return b.size - b.off
}

// Read reads the next len(p) bytes of the body, or what is left of it.
func (b *PutLogEventsBody) Read(p []byte) (int, error) {
	if b.off == b.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := b.fill(p)
	if n == 0 && len(p) > 0 {
		// The events ran out before the length computed for them: never reached when the
		// events did not change, and an error rather than a read that never ends.
		return 0, io.ErrUnexpectedEOF
	}
	b.off += n
	return n, nil
}

// WriteTo writes the rest of the body to w in pieces of 32 KiB, the way io.Copy reads it,
// without io.Copy's buffer of its own (SigV4's payload hash copies the body this way).
func (b *PutLogEventsBody) WriteTo(w io.Writer) (int64, error) {
	buf := bufpool.Get(writeToPiece)
	defer bufpool.Put(buf)
	var written int64
	for {
		n, err := b.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			written += int64(m)
			if werr != nil {
				return written, werr
			}
		}
		if errors.Is(err, io.EOF) {
			return written, nil
		}
		if err != nil {
			return written, err
		}
	}
}

// writeToPiece is the size of the pieces WriteTo writes.
const writeToPiece = 32 << 10

// Seek sets the read position, as io.Seeker defines it. Seeking back starts over and skips
// to the position, so only seeking to the start (what the SDK does) is cheap.
func (b *PutLogEventsBody) Seek(offset int64, whence int) (int64, error) {
	var to int64
	switch whence {
	case io.SeekStart:
		to = offset
	case io.SeekCurrent:
		to = int64(b.off) + offset
	case io.SeekEnd:
		to = int64(b.size) + offset
	default:
		return 0, fmt.Errorf("cloudwatch_groups: PutLogEvents body: invalid whence %d", whence)
	}
	if to < 0 {
		return 0, errors.New("cloudwatch_groups: PutLogEvents body: negative position")
	}
	to = min(to, int64(b.size))
	if int(to) < b.off {
		b.rewind()
	}
	var skip [512]byte
	for b.off < int(to) {
		n := b.fill(skip[:min(len(skip), int(to)-b.off)])
		if n == 0 {
			return int64(b.off), io.ErrUnexpectedEOF // as in Read
		}
		b.off += n
	}
	return to, nil
}

func (b *PutLogEventsBody) rewind() {
	b.off, b.next, b.done = 0, 0, false
	b.open, b.msg, b.end = b.head, "", ""
}

// fill copies the body's next bytes into p until p is full or the body ends, and returns
// how many it copied.
func (b *PutLogEventsBody) fill(p []byte) int {
	n := 0
	for n < len(p) {
		switch {
		case len(b.open) > 0:
			c := copy(p[n:], b.open)
			b.open = b.open[c:]
			n += c
		case len(b.msg) > 0:
			c := copy(p[n:], b.msg)
			b.msg = b.msg[c:]
			n += c
		case len(b.end) > 0:
			c := copy(p[n:], b.end)
			b.end = b.end[c:]
			n += c
		case b.next < len(b.events):
			b.startEvent()
		case !b.done:
			b.end, b.done = bodyEnd, true
		default:
			return n
		}
	}
	return n
}

// startEvent makes the next event the current piece.
func (b *PutLogEventsBody) startEvent() {
	e := &b.events[b.next]
	o := b.opening[:0]
	if b.next > 0 {
		o = append(o, ',')
	}
	b.next++
	o = append(o, '{')
	if e.Timestamp != nil {
		o = append(o, eventTime...)
		o = strconv.AppendInt(o, *e.Timestamp, 10)
		if e.Message != nil {
			o = append(o, ',')
		}
	}
	b.end = eventEndEmpty
	if e.Message != nil {
		o = append(o, eventMessage...)
		b.msg = *e.Message
		b.end = eventEnd
	}
	b.open = o
}

// Escape appends msg escaped as the content of a JSON string (without the quotes), the form
// AppendMessage writes, and returns it with msg's size as CloudWatch counts it (invalid UTF-8
// counts as the U+FFFD it becomes).
func Escape(dst []byte, msg string) ([]byte, int) {
	start := len(dst)
	dst, added := appendEscaped(dst, msg, once, unquoted)
	return dst, len(dst) - start - added
}
