// SPDX-License-Identifier: Apache-2.0

package k8seventsreceiver

import (
	"container/list"
	"sort"
	"time"
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
	seenAt       time.Time // when its last write was received
	elem         *list.Element
}

type tombstone struct {
	uid     string
	count   int32
	at      time.Time
	silence bool // finished by silence or deletion, not by a write: kept in the checkpoint
	elem    *list.Element
}

// seriesTable holds the open series and the tombstones of finished ones, bounded (rule 4).
// It is not safe for concurrent use.
type seriesTable struct {
	t       seriesTimers
	open    map[string]*openSeries
	lru     *list.List // of uid; front is the most recently written
	tombs   map[string]*tombstone
	tombLRU *list.List // of uid; front is the most recent
	evicted int64      // open series dropped because the table was full
}

func newSeriesTable(t seriesTimers) *seriesTable {
	return &seriesTable{
		t: t, open: map[string]*openSeries{}, lru: list.New(),
		tombs: map[string]*tombstone{}, tombLRU: list.New(),
	}
}

func capNote(ev event) event {
	if len(ev.Note) > maxNote {
		ev.Note = ev.Note[:maxNote]
	}
	return ev
}

// stale reports whether a new-recorder write carries a last occurrence older than the
// recorder's finish window: the recorder's final write of the series.
func (s *seriesTable) stale(ev event, now time.Time) bool {
	return !ev.Legacy && now.Sub(ev.Last) > s.t.FinishWindow
}

// observe handles one notification (or a relist item above the checkpoint). created is set for
// a watch ADDED and for relist items, which may be new.
func (s *seriesTable) observe(ev event, now time.Time, created bool) []transition {
	if o, ok := s.open[ev.UID]; ok {
		return s.update(o, ev, now)
	}
	if tb, ok := s.tombs[ev.UID]; ok {
		if ev.Count <= tb.count || s.stale(ev, now) {
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
	if s.stale(ev, now) {
		s.addTomb(ev.UID, ev.Count, now, false)
		return []transition{{State: stateFinished, Event: ev}}
	}
	s.addOpen(ev, now)
	return []transition{{State: stateStart, Event: ev}}
}

func (s *seriesTable) update(o *openSeries, ev event, now time.Time) []transition {
	if ev.Count <= o.ev.Count && !ev.Last.After(o.ev.Last) {
		return nil // not a recorder write: labels, annotations, managed fields
	}
	prevCount, prevLast := o.emittedCount, o.emittedLast
	o.ev, o.seenAt = capNote(ev), now
	s.lru.MoveToFront(o.elem)
	switch {
	case s.stale(ev, now):
		s.removeOpen(o)
		s.addTomb(ev.UID, ev.Count, now, false)
		return []transition{{State: stateFinished, Event: ev, PrevCount: prevCount, PrevLast: prevLast}}
	case ev.Legacy && ev.Last.Sub(o.emittedLast) < s.t.OngoingInterval:
		return nil // a legacy count++ inside the ongoing interval
	}
	o.emittedCount, o.emittedLast = ev.Count, ev.Last
	return []transition{{State: stateOngoing, Event: ev, PrevCount: prevCount, PrevLast: prevLast}}
}

// seed enters a relist item at or below the checkpoint: already handled by the previous run,
// so it emits nothing; an open series is tracked as emitted at its current count (rule 5.3).
func (s *seriesTable) seed(ev event, now time.Time) {
	if ev.Count <= 1 {
		return
	}
	if _, ok := s.tombs[ev.UID]; ok {
		return
	}
	if o, ok := s.open[ev.UID]; ok {
		o.ev, o.emittedCount, o.emittedLast = capNote(ev), ev.Count, ev.Last
		return
	}
	if s.stale(ev, now) {
		s.addTomb(ev.UID, ev.Count, now, false)
		return
	}
	s.addOpen(ev, now)
}

// deleted handles a deleted Event: an open series finishes.
func (s *seriesTable) deleted(uid string) []transition {
	if tb, ok := s.tombs[uid]; ok {
		s.dropTomb(tb)
	}
	o, ok := s.open[uid]
	if !ok {
		return nil
	}
	s.removeOpen(o)
	return []transition{{State: stateFinished, Event: o.ev, PrevCount: o.emittedCount, PrevLast: o.emittedLast}}
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
		out = append(out, transition{State: stateFinished, Event: o.ev, PrevCount: o.emittedCount, PrevLast: o.emittedLast})
	}
	for e := s.tombLRU.Back(); e != nil; {
		prev := e.Prev()
		tb := s.tombs[e.Value.(string)]
		if now.Sub(tb.at) <= s.t.TombstoneTTL {
			break
		}
		s.dropTomb(tb)
		e = prev
	}
	return out
}

func (s *seriesTable) addOpen(ev event, now time.Time) {
	o := &openSeries{ev: capNote(ev), emittedCount: ev.Count, emittedLast: ev.Last, seenAt: now}
	o.elem = s.lru.PushFront(ev.UID)
	s.open[ev.UID] = o
	for len(s.open) > s.t.MaxOpen {
		oldest := s.open[s.lru.Back().Value.(string)]
		s.removeOpen(oldest)
		s.evicted++
	}
}

func (s *seriesTable) removeOpen(o *openSeries) {
	s.lru.Remove(o.elem)
	delete(s.open, o.ev.UID)
}

func (s *seriesTable) addTomb(uid string, count int32, now time.Time, silence bool) {
	if tb, ok := s.tombs[uid]; ok {
		s.dropTomb(tb)
	}
	tb := &tombstone{uid: uid, count: count, at: now, silence: silence}
	tb.elem = s.tombLRU.PushFront(uid)
	s.tombs[uid] = tb
	for len(s.tombs) > s.t.MaxOpen {
		s.dropTomb(s.tombs[s.tombLRU.Back().Value.(string)])
	}
}

func (s *seriesTable) dropTomb(tb *tombstone) {
	s.tombLRU.Remove(tb.elem)
	delete(s.tombs, tb.uid)
}

// silenceTombs returns the tombstones the checkpoint must carry: series finished without a
// write that a relist could recognize (rule 5.3).
func (s *seriesTable) silenceTombs() map[string]tombstoneState {
	out := map[string]tombstoneState{}
	for uid, tb := range s.tombs {
		if tb.silence {
			out[uid] = tombstoneState{Count: tb.count, At: tb.at}
		}
	}
	return out
}

// restoreTombs enters the checkpoint's tombstones.
func (s *seriesTable) restoreTombs(in map[string]tombstoneState) {
	uids := make([]string, 0, len(in))
	for uid := range in {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool { return in[uids[i]].At.Before(in[uids[j]].At) })
	for _, uid := range uids {
		s.addTomb(uid, in[uid].Count, in[uid].At, true)
	}
}

// tombstoneState is a tombstone in the checkpoint.
type tombstoneState struct {
	Count int32     `json:"count"`
	At    time.Time `json:"at"`
}
