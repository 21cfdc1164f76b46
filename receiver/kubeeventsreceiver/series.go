// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"container/list"
	"hash/fnv"
	"sort"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// state is what a record says about its Event's series (design.md rule 3).
type state uint8

const (
	stateSingleton state = iota + 1
	stateStart
	stateOngoing
	stateFinished
)

var stateNames = map[state]string{
	stateSingleton: "singleton", stateStart: "start", stateOngoing: "ongoing", stateFinished: "finished",
}

func (s state) String() string { return stateNames[s] }

// transition is one record to emit: an Event and the series state it reports, with the count
// and last occurrence time of the previous record of the same series (zero for the first).
type transition struct {
	State     state
	Event     event
	PrevCount int32
	PrevLast  time.Time
	// Context is the regarding object's context captured when the series opened (design.md
	// rule 9.6); unset for a singleton and a series first seen finished, whose context is read
	// when they are emitted, which is when they began to be seen.
	Context capturedContext
}

// objContext is the regarding object's span context as trace_context answers it, and whether
// spans link to it instead of parenting under it (tracesource.Source's link: the context was
// read from tracing.k8s.io/traceparent).
type objContext struct {
	sc   trace.SpanContext
	link bool
}

// capturedContext is a span context read from trace_context with its relation, and whether it
// was read.
type capturedContext struct {
	sc   trace.SpanContext
	link bool
	read bool
}

// seriesTimers are the series settings the inference uses.
type seriesTimers struct {
	FinishWindow     time.Duration // the new recorder's finish window (6m)
	HeartbeatTimeout time.Duration // silence after which a new-recorder series is finished
	FinishAfter      time.Duration // silence after which a legacy series is finished
	OngoingInterval  time.Duration // least occurrence time between two ongoing records of a legacy series
	TombstoneTTL     time.Duration // how long a finished series is remembered
	MaxOpen          int           // open series (and tombstones) kept at most
}

type openSeries struct {
	ev           event
	emittedCount int32
	emittedLast  time.Time
	seenAt       time.Time // when it was last written (the write time, else when the write was received)
	term         int64     // the term that emitted its last record (0: none known)
	ctx          capturedContext
	elem         *list.Element
}

// priorSeries is what the checkpoint says a previous term emitted for a series (rule 5.3):
// open (its last record's count and occurrence time) or finished without a write (tomb).
type priorSeries struct {
	Count int32
	Last  time.Time // open: the last record's occurrence time
	At    time.Time // open: its last write; tomb: when it finished
	Tomb  bool
	Term  int64 // the term that wrote this entry
}

type tombstone struct {
	key     uint64 // seriesKey of the Event's uid
	count   int32
	term    int64 // the term that finished it (a restored one keeps its own)
	at      time.Time
	silence bool // finished by silence or deletion, not by a write: kept in the checkpoint
	elem    *list.Element
}

// seriesTable holds the open series and the tombstones of finished ones, bounded (rule 4).
// It is not safe for concurrent use.
type seriesTable struct {
	t    seriesTimers
	open map[string]*openSeries
	// openKeys maps the seriesKey of every open series to its uid.
	openKeys map[uint64]string
	lru      *list.List            // of uid; front is the most recently written
	tombs    map[uint64]*tombstone // by seriesKey
	tombLRU  *list.List            // of seriesKey; front is the most recent
	evicted  int64                 // open series dropped because the table was full
	// term numbers the leader's term (the Lease's transitions; 0 without leader election).
	term int64
	// prior holds the previous term's open series not yet met again in a list, by seriesKey.
	prior map[uint64]priorSeries
	// capture reads the regarding object's context when a series opens (nil: no trace_context).
	capture func(ev *event) objContext
}

func newSeriesTable(t seriesTimers) *seriesTable {
	return &seriesTable{
		t: t, open: map[string]*openSeries{}, openKeys: map[uint64]string{}, lru: list.New(),
		tombs: map[uint64]*tombstone{}, tombLRU: list.New(),
	}
}

func capNote(ev event) event {
	if len(ev.Note) > maxNote {
		ev.Note = ev.Note[:maxNote]
	}
	return ev
}

// stale reports whether a new-recorder write is the recorder's final write: at write time wt
// its last occurrence was older than the finish window (design.md rule 3.1). An unknown write
// time (zero) is never stale: the silence timer decides.
func (s *seriesTable) stale(ev event, wt time.Time) bool {
	return !ev.Legacy && !wt.IsZero() && wt.Sub(ev.Last) > s.t.FinishWindow
}

// writeTime is when ev's series was written: the API server's record of it, else, for a watch
// notification (live), the time it was received, else unknown (zero).
func writeTime(ev event, now time.Time, live bool) time.Time {
	switch {
	case !ev.Written.IsZero():
		return ev.Written
	case live:
		return now
	}
	return time.Time{}
}

// seenTime is the time the silence timer counts from: the write time when known, else now.
func seenTime(wt, now time.Time) time.Time {
	if wt.IsZero() || wt.After(now) {
		return now
	}
	return wt
}

// takePrior moves the previous term's open state of ev's series into the table, as emitted at
// the count and time the checkpoint names; true when there was one.
func (s *seriesTable) takePrior(ev event, now time.Time) bool {
	if len(s.prior) == 0 {
		return false
	}
	k := seriesKey(ev.UID)
	p, ok := s.prior[k]
	if !ok {
		return false
	}
	delete(s.prior, k)
	o := s.addOpen(ev, seenTime(p.At, now))
	o.emittedCount, o.emittedLast, o.term = p.Count, p.Last, p.Term
	o.ev.Count, o.ev.Last = p.Count, p.Last
	return true
}

// observe handles one notification (or a relist item above the checkpoint). created is set for
// a watch ADDED and for relist items, which may be new; live for watch notifications.
func (s *seriesTable) observe(ev event, now time.Time, created, live bool) []transition {
	wt := writeTime(ev, now, live)
	if o, ok := s.open[ev.UID]; ok {
		return s.update(o, ev, now, wt)
	}
	if _, ok := s.tombs[seriesKey(ev.UID)]; !ok && s.takePrior(ev, now) {
		return s.update(s.open[ev.UID], ev, now, wt)
	}
	if tb, ok := s.tombs[seriesKey(ev.UID)]; ok {
		if ev.Count <= tb.count || s.stale(ev, wt) {
			return nil // a late write of a finished series
		}
		s.dropTomb(tb) // a legacy series that occurs again after it was finished
	}
	if ev.Count <= 1 {
		if created {
			return []transition{{State: stateSingleton, Event: ev}}
		}
		return nil
	}
	if s.stale(ev, wt) {
		s.addTomb(ev.UID, ev.Count, now, false)
		return []transition{{State: stateFinished, Event: ev}}
	}
	o := s.addOpen(ev, seenTime(wt, now))
	o.term = s.term
	return []transition{{State: stateStart, Event: ev, Context: o.ctx}}
}

func (s *seriesTable) update(o *openSeries, ev event, now, wt time.Time) []transition {
	if ev.Count <= o.ev.Count && !ev.Last.After(o.ev.Last) {
		return nil // not a recorder write: labels, annotations, managed fields
	}
	prevCount, prevLast, prevNote := o.emittedCount, o.emittedLast, o.ev.Note
	o.ev, o.seenAt = capNote(ev), seenTime(wt, now)
	s.lru.MoveToFront(o.elem)
	switch {
	case s.stale(ev, wt):
		s.removeOpen(o)
		s.addTomb(ev.UID, ev.Count, now, false)
		return []transition{{State: stateFinished, Event: ev, PrevCount: prevCount, PrevLast: prevLast, Context: o.ctx}}
	case ev.Legacy && ev.Last.Sub(o.emittedLast) < s.t.OngoingInterval && o.ev.Note == prevNote:
		return nil // a legacy count++ inside the ongoing interval; a changed note is a record (rule 10)
	}
	o.emittedCount, o.emittedLast, o.term = ev.Count, ev.Last, s.term
	return []transition{{State: stateOngoing, Event: ev, PrevCount: prevCount, PrevLast: prevLast, Context: o.ctx}}
}

// seed enters a relist item at or below the checkpoint: already handled by the previous run,
// so it emits nothing; an open series is tracked as emitted at its current count (rule 5.3).
// The write time decides as on the watch: a final write seen by the list is a tombstone, any
// other write an open series whose silence counts from that write.
func (s *seriesTable) seed(ev event, now time.Time) {
	if ev.Count <= 1 {
		return
	}
	if _, ok := s.tombs[seriesKey(ev.UID)]; ok {
		return
	}
	wt := writeTime(ev, now, false)
	if o, ok := s.open[ev.UID]; ok {
		o.ev, o.emittedCount, o.emittedLast = capNote(ev), ev.Count, ev.Last
		o.seenAt = seenTime(wt, now)
		return
	}
	if s.stale(ev, wt) {
		if len(s.prior) > 0 {
			delete(s.prior, seriesKey(ev.UID))
		}
		s.addTomb(ev.UID, ev.Count, now, false)
		return
	}
	if s.takePrior(ev, now) {
		// at or below the checkpoint: the previous term handled this write; for a legacy
		// series its last ongoing record may be older than the write (rule 3)
		o := s.open[ev.UID]
		o.ev = capNote(ev)
		if !ev.Legacy {
			o.emittedCount, o.emittedLast = ev.Count, ev.Last
		}
		o.seenAt = seenTime(wt, now)
		return
	}
	s.addOpen(ev, seenTime(wt, now))
}

// deleted handles a deleted Event: an open series finishes.
func (s *seriesTable) deleted(uid string) []transition {
	if tb, ok := s.tombs[seriesKey(uid)]; ok {
		s.dropTomb(tb)
	}
	o, ok := s.open[uid]
	if !ok {
		return nil
	}
	s.removeOpen(o)
	return []transition{{State: stateFinished, Event: o.ev, PrevCount: o.emittedCount, PrevLast: o.emittedLast, Context: o.ctx}}
}

// sweep finishes series silent for longer than their timeout and forgets old tombstones.
func (s *seriesTable) sweep(now time.Time) []transition {
	var out []transition
	for uid, o := range s.open {
		silent := now.Sub(o.seenAt) > s.t.HeartbeatTimeout
		if o.ev.Legacy {
			silent = now.Sub(o.ev.Last) > s.t.FinishAfter
		}
		if !silent {
			continue
		}
		s.removeOpen(o)
		s.addTomb(uid, o.ev.Count, now, true)
		out = append(out, transition{State: stateFinished, Event: o.ev, PrevCount: o.emittedCount, PrevLast: o.emittedLast, Context: o.ctx})
	}
	for e := s.tombLRU.Back(); e != nil; {
		prev := e.Prev()
		tb := s.tombs[e.Value.(uint64)]
		if now.Sub(tb.at) <= s.t.TombstoneTTL {
			break
		}
		s.dropTomb(tb)
		e = prev
	}
	// the previous term's open series a list never met again: deleted meanwhile
	for k, p := range s.prior {
		if now.Sub(p.At) > s.t.TombstoneTTL {
			delete(s.prior, k)
		}
	}
	return out
}

func (s *seriesTable) addOpen(ev event, seenAt time.Time) *openSeries {
	o := &openSeries{ev: capNote(ev), emittedCount: ev.Count, emittedLast: ev.Last, seenAt: seenAt}
	if s.capture != nil {
		c := s.capture(&ev)
		o.ctx = capturedContext{sc: c.sc, link: c.link, read: true}
	}
	o.elem = s.lru.PushFront(ev.UID)
	s.open[ev.UID] = o
	s.openKeys[seriesKey(ev.UID)] = ev.UID
	for len(s.open) > s.t.MaxOpen {
		oldest := s.open[s.lru.Back().Value.(string)]
		s.removeOpen(oldest)
		s.evicted++
	}
	return o
}

func (s *seriesTable) removeOpen(o *openSeries) {
	s.lru.Remove(o.elem)
	delete(s.open, o.ev.UID)
	delete(s.openKeys, seriesKey(o.ev.UID))
}

func (s *seriesTable) addTomb(uid string, count int32, now time.Time, silence bool) {
	s.putTomb(&tombstone{key: seriesKey(uid), count: count, at: now, silence: silence, term: s.term})
}

func (s *seriesTable) putTomb(tb *tombstone) {
	if old, ok := s.tombs[tb.key]; ok {
		s.dropTomb(old)
	}
	tb.elem = s.tombLRU.PushFront(tb.key)
	s.tombs[tb.key] = tb
	for len(s.tombs) > s.t.MaxOpen {
		s.dropTomb(s.tombs[s.tombLRU.Back().Value.(uint64)])
	}
}

func (s *seriesTable) dropTomb(tb *tombstone) {
	s.tombLRU.Remove(tb.elem)
	delete(s.tombs, tb.key)
}

// seriesKey is the 64-bit FNV-1a hash of an Event's uid: the checkpoint's key of a series. Two
// of the at most 2 x series.max_open series a checkpoint holds collide with a probability of
// about n^2 / 2^65 (1e-11 at 20,000).
func seriesKey(uid string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return h.Sum64()
}

// snapshot is the series state the checkpoint carries (rule 5.2): every open series at its
// last record, every series finished without a write (silence, deletion) and the previous
// term's open series not met again yet.
func (s *seriesTable) snapshot() map[uint64]priorSeries {
	out := make(map[uint64]priorSeries, len(s.open)+len(s.tombs)+len(s.prior))
	for k, p := range s.prior {
		out[k] = p
	}
	for uid, o := range s.open {
		out[seriesKey(uid)] = priorSeries{Count: o.emittedCount, Last: o.emittedLast, At: o.seenAt, Term: o.term}
	}
	for k, tb := range s.tombs {
		if tb.silence {
			out[k] = priorSeries{Count: tb.count, At: tb.at, Tomb: true, Term: tb.term}
		}
	}
	return out
}

// restore enters a checkpoint's series: tombstones as such, open series as prior state that
// the list (rule 5.3) or a later write takes up.
func (s *seriesTable) restore(in map[uint64]priorSeries) {
	keys := make([]uint64, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return in[keys[i]].At.Before(in[keys[j]].At) })
	for _, k := range keys {
		s.absorb(k, in[k])
	}
}

// absorb enters one series of another term's checkpoint (a load, or a merge after a conflict,
// rule 5.7): a series finished there stays finished unless this term saw it written since; an
// open series this term does not know becomes prior state.
func (s *seriesTable) absorb(k uint64, p priorSeries) {
	if p.Tomb {
		if tb, ok := s.tombs[k]; ok && (tb.term > p.Term || tb.count >= p.Count) {
			return
		}
		if uid, ok := s.openKeys[k]; ok {
			o := s.open[uid]
			if o.ev.Count > p.Count {
				return // written again after that finish
			}
			s.removeOpen(o)
		}
		delete(s.prior, k)
		s.putTomb(&tombstone{key: k, count: p.Count, at: p.At, silence: true, term: p.Term})
		return
	}
	if _, ok := s.tombs[k]; ok {
		return
	}
	if _, ok := s.openKeys[k]; ok {
		return
	}
	if q, ok := s.prior[k]; ok && (q.Term > p.Term || q.Term == p.Term && q.Count >= p.Count) {
		return
	}
	if s.prior == nil {
		s.prior = map[uint64]priorSeries{}
	}
	s.prior[k] = p
}
