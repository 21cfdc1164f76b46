// Package batching turns the events of one log stream into PutLogEvents batches that respect
// every CloudWatch Logs rule: batch bytes (message bytes plus a fixed overhead per event),
// event count, chronological order, time span, event age and event size.
package batching

import (
	"slices"
	"time"
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
	// Message is the event text, UTF-8.
	Message string
	// Ref identifies the source record; pieces of a split record share it.
	Ref int
}

// Size is the event's size as CloudWatch counts it.
func (e Event) Size() int { return len(e.Message) + EventOverhead }

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
		if len(e.Message) <= maxBytes {
			kept = append(kept, e)
			continue
		}
		if opts.Oversize == Split {
			pieces := splitMessage(e.Message, maxBytes)
			st.Split++
			st.SplitPieces += len(pieces) - 1
			e.Message = pieces[0]
			kept = append(kept, e)
			for _, p := range pieces[1:] {
				extra = append(extra, Event{Timestamp: e.Timestamp, Message: p, Ref: e.Ref})
			}
			continue
		}
		st.Truncated++
		e.Message = cutUTF8(e.Message, maxBytes-len(TruncationMarker)) + TruncationMarker
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

// cutUTF8 returns the longest prefix of s of at most n bytes that does not end inside a rune.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// splitMessage cuts s into pieces of at most n bytes at rune boundaries.
func splitMessage(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		p := cutUTF8(s, n)
		if p == "" { // n smaller than one rune: fall back to a byte cut.
			p = s[:min(n, len(s))]
		}
		out = append(out, p)
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
