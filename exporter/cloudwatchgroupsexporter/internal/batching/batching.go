// SPDX-License-Identifier: Apache-2.0

// Package batching turns the events of one log stream into PutLogEvents batches that respect
// every CloudWatch Logs rule: batch bytes (message bytes plus a fixed overhead per event),
// event count, chronological order, time span, event age and event size.
package batching

import (
	"slices"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// CloudWatch Logs PutLogEvents limits.
const (
	// MaxBatchBytes is the largest batch, counting EventOverhead per event.
	MaxBatchBytes = 1_048_576
	// EventOverhead is the number of bytes CloudWatch adds to each event's message size.
	EventOverhead = 26
	// MaxEvents is the largest number of events in one batch.
	MaxEvents = 10_000
	// MaxSpan is the time span one batch must stay below.
	MaxSpan = 24 * time.Hour
	// MaxEventBytes is the largest message of a single event.
	MaxEventBytes = MaxBatchBytes - EventOverhead
	// MaxAge is how far in the past an event may be.
	MaxAge = 14 * 24 * time.Hour
	// MaxAhead is how far in the future an event may be.
	MaxAhead = 2 * time.Hour
)

// TruncationMarker is appended to a truncated message.
const TruncationMarker = "…[truncated]"

// Event is one log event of a stream.
type Event struct {
	// Timestamp in milliseconds since the Unix epoch.
	Timestamp int64
	// Message is the event text as the PutLogEvents body carries it: the content of a JSON
	// string, escaped, without the quotes (the exporter escapes each message once, as it
	// writes it).
	Message string
	// Unescaped is Message's length once unescaped, in UTF-8 bytes: what CloudWatch counts.
	// Zero for a message without escapes, whose length it is.
	Unescaped int
	// Ref identifies the source record; pieces of a split record share it.
	Ref int
}

// MessageSize is the message's size as CloudWatch counts it.
func (e Event) MessageSize() int {
	if e.Unescaped > 0 {
		return e.Unescaped
	}
	return len(e.Message)
}

// WithMessage returns e with message msg (escaped) whose size once unescaped is size, setting
// Unescaped as its rule says: zero when the two are equal.
func (e Event) WithMessage(msg string, size int) Event {
	e.Message, e.Unescaped = msg, 0
	if size != len(msg) {
		e.Unescaped = size
	}
	return e
}

// Size is the event's size as CloudWatch counts it.
func (e Event) Size() int { return e.MessageSize() + EventOverhead }

// Oversize selects what happens to a message longer than the event limit.
type Oversize int

const (
	// Truncate cuts the message and appends TruncationMarker.
	Truncate Oversize = iota
	// Split cuts the message into consecutive events with the same timestamp.
	Split
)

// Options controls Prepare.
type Options struct {
	// MaxEventBytes is the largest message kept in one event; 0 or more than MaxEventBytes means MaxEventBytes.
	MaxEventBytes int
	// MaxAge is how old an event may be; 0 or more than MaxAge means MaxAge.
	MaxAge time.Duration
	// Oversize selects truncation or splitting of long messages.
	Oversize Oversize
}

// Stats counts what Prepare did to events.
type Stats struct {
	TooOld, TooNew, Empty int
	// Truncated and Split count source events; SplitPieces counts the extra events split made.
	Truncated, Split, SplitPieces int
}

// Prepare drops events CloudWatch would reject for their age or emptiness, shortens or splits
// oversized messages, and sorts the rest by timestamp, stable on input order.
// It reuses the events slice.
func Prepare(events []Event, now time.Time, opts Options) ([]Event, Stats) {
	var st Stats
	maxBytes := opts.MaxEventBytes
	if maxBytes <= 0 || maxBytes > MaxEventBytes {
		maxBytes = MaxEventBytes
	}
	maxAge := opts.MaxAge
	if maxAge <= 0 || maxAge > MaxAge {
		maxAge = MaxAge
	}
	oldest := now.Add(-maxAge).UnixMilli()
	newest := now.Add(MaxAhead).UnixMilli()

	kept := events[:0]
	var extra []Event
	for _, e := range events {
		switch {
		case e.Timestamp < oldest:
			st.TooOld++
			continue
		case e.Timestamp > newest:
			st.TooNew++
			continue
		case e.Message == "":
			st.Empty++
			continue
		}
		if e.MessageSize() <= maxBytes {
			kept = append(kept, e)
			continue
		}
		if opts.Oversize == Split {
			pieces := splitMessage(e.Message, maxBytes)
			st.Split++
			st.SplitPieces += len(pieces) - 1
			e = e.WithMessage(pieces[0].text, pieces[0].size)
			kept = append(kept, e)
			for _, p := range pieces[1:] {
				extra = append(extra, Event{Timestamp: e.Timestamp, Ref: e.Ref}.WithMessage(p.text, p.size))
			}
			continue
		}
		st.Truncated++
		// The marker needs no escaping: its size is its length.
		cut, size := cutEscaped(e.Message, maxBytes-len(TruncationMarker))
		e = e.WithMessage(cut+TruncationMarker, size+len(TruncationMarker))
		kept = append(kept, e)
	}
	if len(extra) > 0 {
		// Pieces follow their first piece: stable sort keeps equal timestamps in this order
		// only if they follow it in the slice, so merge them in place of their source.
		kept = insertPieces(kept, extra)
	}
	slices.SortStableFunc(kept, func(a, b Event) int {
		switch {
		case a.Timestamp < b.Timestamp:
			return -1
		case a.Timestamp > b.Timestamp:
			return 1
		}
		return 0
	})
	return kept, st
}

// insertPieces places every extra piece right after the last kept event with the same Ref.
func insertPieces(kept, extra []Event) []Event {
	byRef := map[int][]Event{}
	for _, p := range extra {
		byRef[p.Ref] = append(byRef[p.Ref], p)
	}
	out := make([]Event, 0, len(kept)+len(extra))
	for i, e := range kept {
		out = append(out, e)
		last := i+1 == len(kept) || kept[i+1].Ref != e.Ref
		if ps, ok := byRef[e.Ref]; ok && last {
			out = append(out, ps...)
			delete(byRef, e.Ref)
		}
	}
	return out
}

// cutEscaped returns the longest prefix of the escaped message s whose unescaped size is at
// most n bytes and that ends neither inside an escape nor inside a rune, and that size.
func cutEscaped(s string, n int) (string, int) {
	i, size := 0, 0
	for i < len(s) {
		width, unescaped := unitAt(s[i:])
		if size+unescaped > n {
			break
		}
		i += width
		size += unescaped
	}
	return s[:i], size
}

// unitAt returns the length of what starts s and cannot be cut (an escape, a rune or a byte)
// and the UTF-8 length of what it stands for.
func unitAt(s string) (width, unescaped int) {
	switch c := s[0]; {
	case c == '\\':
		return escapeAt(s)
	case c >= utf8.RuneSelf:
		_, width = utf8.DecodeRuneInString(s)
		return width, width
	}
	return 1, 1
}

// escapeAt returns the length of the escape that starts s and the UTF-8 length of what it
// stands for: \uXXXX (a pair of them for a rune beyond the Basic Multilingual Plane) or a
// backslash and one byte. An escape cut short counts as what is left of it.
func escapeAt(s string) (width, unescaped int) {
	if len(s) < 2 || s[1] != 'u' {
		return min(2, len(s)), 1
	}
	if len(s) < 6 {
		return len(s), 1
	}
	r := hex4(s[2:6])
	if utf16.IsSurrogate(r) && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if pair := utf16.DecodeRune(r, hex4(s[8:12])); pair != utf8.RuneError {
			return 12, utf8.RuneLen(pair)
		}
	}
	if r < 0 || utf16.IsSurrogate(r) {
		r = utf8.RuneError
	}
	return 6, utf8.RuneLen(r)
}

// hex4 reads four hexadecimal digits; -1 when they are not.
func hex4(s string) rune {
	var r rune
	for i := range 4 {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// piece is part of a split message, with its unescaped size.
type piece struct {
	text string
	size int
}

// splitMessage cuts the escaped message s into pieces of at most n unescaped bytes, at rune
// and escape boundaries.
func splitMessage(s string, n int) []piece {
	var out []piece
	for len(s) > 0 {
		p, size := cutEscaped(s, n)
		if p == "" { // n smaller than one rune or escape: a piece of one of them.
			w, u := unitAt(s)
			p, size = s[:w], u
		}
		out = append(out, piece{p, size})
		s = s[len(p):]
	}
	return out
}

// Cut splits events, sorted by timestamp and each within the event limit, into batches.
// A new batch starts when the next event would exceed MaxEvents or MaxBatchBytes, or would
// make the batch span MaxSpan or more. The returned batches share events' backing array.
func Cut(events []Event) [][]Event {
	var batches [][]Event
	start, bytes := 0, 0
	for i, e := range events {
		if i > start && (i-start == MaxEvents ||
			bytes+e.Size() > MaxBatchBytes ||
			e.Timestamp-events[start].Timestamp >= MaxSpan.Milliseconds()) {
			batches = append(batches, events[start:i:i])
			start, bytes = i, 0
		}
		bytes += e.Size()
	}
	if start < len(events) {
		batches = append(batches, events[start:])
	}
	return batches
}

// Bytes is the batch's size as CloudWatch counts it.
func Bytes(batch []Event) int {
	n := 0
	for _, e := range batch {
		n += e.Size()
	}
	return n
}
