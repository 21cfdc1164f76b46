// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func testTimers() seriesTimers {
	return seriesTimers{
		FinishWindow: 6 * time.Minute, HeartbeatTimeout: 40 * time.Minute, FinishAfter: 15 * time.Minute,
		OngoingInterval: 30 * time.Minute, TombstoneTTL: 75 * time.Minute, MaxOpen: 3,
	}
}

// step is one input to the table: a notification (ev set), a deletion or a sweep, at a time.
type step struct {
	at      time.Duration // since t0
	kind    string        // "add", "mod", "del", "sweep", "seed"
	uid     string
	count   int32
	last    time.Duration // occurrence time since t0
	legacy  bool
	want    []state
	wantCnt int32 // count of the last transition, when want is not empty
	note    string
}

func ev(uid string, count int32, last time.Duration, legacy bool) event {
	return event{UID: uid, Namespace: "ns", Count: count, First: t0, Last: t0.Add(last), Legacy: legacy}
}

func TestSeriesInference(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"new recorder: singleton, series patch, heartbeats, final write", []step{
			{at: 0, kind: "add", uid: "a", count: 1, want: []state{stateSingleton}},
			{at: 10 * time.Second, kind: "mod", uid: "a", count: 2, last: 10 * time.Second, want: []state{stateStart}},
			{at: 30 * time.Minute, kind: "mod", uid: "a", count: 170, last: 29*time.Minute + 50*time.Second, want: []state{stateOngoing}, wantCnt: 170},
			{at: 60 * time.Minute, kind: "mod", uid: "a", count: 340, last: 59 * time.Minute, want: []state{stateOngoing}},
			// the recorder's finish check: last occurrence at 62m, written at 69m (stale by 7m)
			{at: 69 * time.Minute, kind: "mod", uid: "a", count: 352, last: 62 * time.Minute, want: []state{stateFinished}, wantCnt: 352},
			// a repeated identical write is not possible, a later one to a finished series is late
			{at: 80 * time.Minute, kind: "sweep", want: nil},
		}},
		{"no finish between two heartbeats", []step{
			{at: 0, kind: "mod", uid: "b", count: 2, last: 0, want: []state{stateStart}},
			{at: 30 * time.Minute, kind: "mod", uid: "b", count: 9, last: 29 * time.Minute, want: []state{stateOngoing}},
			{at: 59 * time.Minute, kind: "sweep", want: nil},
			{at: 60 * time.Minute, kind: "mod", uid: "b", count: 19, last: 59 * time.Minute, want: []state{stateOngoing}},
		}},
		{"silence beyond the heartbeat timeout finishes a new-recorder series (its recorder died)", []step{
			{at: 0, kind: "mod", uid: "c", count: 2, want: []state{stateStart}},
			{at: 40 * time.Minute, kind: "sweep", want: nil},
			{at: 41 * time.Minute, kind: "sweep", want: []state{stateFinished}, wantCnt: 2},
			{at: 42 * time.Minute, kind: "mod", uid: "c", count: 2, last: 0, want: nil}, // late final write
		}},
		{"series first seen at its final write", []step{
			{at: 10 * time.Minute, kind: "mod", uid: "d", count: 5, last: 2 * time.Minute, want: []state{stateFinished}},
			{at: 11 * time.Minute, kind: "mod", uid: "d", count: 5, last: 2 * time.Minute, want: nil},
		}},
		{"legacy crashloop: count patched every 5m collapses to start, ongoing per 30m, finished", []step{
			{at: 0, kind: "add", uid: "e", count: 1, legacy: true, want: []state{stateSingleton}},
			{at: 5 * time.Minute, kind: "mod", uid: "e", count: 2, last: 5 * time.Minute, legacy: true, want: []state{stateStart}},
			{at: 10 * time.Minute, kind: "mod", uid: "e", count: 3, last: 10 * time.Minute, legacy: true, want: nil},
			{at: 30 * time.Minute, kind: "mod", uid: "e", count: 7, last: 30 * time.Minute, legacy: true, want: nil},
			{at: 35 * time.Minute, kind: "mod", uid: "e", count: 8, last: 35 * time.Minute, legacy: true, want: []state{stateOngoing}, wantCnt: 8},
			{at: 40 * time.Minute, kind: "mod", uid: "e", count: 9, last: 40 * time.Minute, legacy: true, want: nil},
			{at: 55 * time.Minute, kind: "sweep", want: nil},
			{at: 56 * time.Minute, kind: "sweep", want: []state{stateFinished}, wantCnt: 9},
			// it crashes again later: a new run of the same Event
			{at: 70 * time.Minute, kind: "mod", uid: "e", count: 10, last: 70 * time.Minute, legacy: true, want: []state{stateStart}},
		}},
		{"aggregated legacy Event: a changed note is an ongoing record inside the interval", []step{
			{at: 0, kind: "mod", uid: "n", count: 2, legacy: true, want: []state{stateStart}},
			{at: time.Minute, kind: "mod", uid: "n", count: 3, last: time.Minute, legacy: true, note: "(combined from similar events): b", want: []state{stateOngoing}, wantCnt: 3},
			{at: 2 * time.Minute, kind: "mod", uid: "n", count: 4, last: 2 * time.Minute, legacy: true, note: "(combined from similar events): b", want: nil},
			{at: 3 * time.Minute, kind: "mod", uid: "n", count: 5, last: 3 * time.Minute, legacy: true, note: "(combined from similar events): c", want: []state{stateOngoing}, wantCnt: 5},
		}},
		{"updates that change neither count nor time emit nothing", []step{
			{at: 0, kind: "mod", uid: "f", count: 2, want: []state{stateStart}},
			{at: time.Minute, kind: "mod", uid: "f", count: 2, want: nil},
			{at: time.Minute, kind: "mod", uid: "g", count: 1, want: nil},
		}},
		{"deleting an open series finishes it", []step{
			{at: 0, kind: "mod", uid: "h", count: 2, want: []state{stateStart}},
			{at: time.Minute, kind: "del", uid: "h", want: []state{stateFinished}},
			{at: 2 * time.Minute, kind: "del", uid: "h", want: nil},
		}},
		{"seeded series emit nothing until they change", []step{
			{at: 0, kind: "seed", uid: "i", count: 4, want: nil},
			{at: time.Minute, kind: "mod", uid: "i", count: 4, want: nil},
			{at: 30 * time.Minute, kind: "mod", uid: "i", count: 9, last: 29 * time.Minute, want: []state{stateOngoing}},
		}},
		{"a full table evicts the series written longest ago", []step{
			{at: 0, kind: "mod", uid: "j1", count: 2, want: []state{stateStart}},
			{at: 1, kind: "mod", uid: "j2", count: 2, want: []state{stateStart}},
			{at: 2, kind: "mod", uid: "j3", count: 2, want: []state{stateStart}},
			{at: 3, kind: "mod", uid: "j4", count: 2, want: []state{stateStart}},
			{at: 4, kind: "mod", uid: "j1", count: 3, last: 4, want: []state{stateStart}}, // evicted: starts again
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := newSeriesTable(testTimers())
			for i, s := range tt.steps {
				now := t0.Add(s.at)
				var got []transition
				e := ev(s.uid, s.count, s.last, s.legacy)
				e.Note = s.note
				switch s.kind {
				case "add":
					got = tab.observe(e, now, true, true)
				case "mod":
					got = tab.observe(e, now, false, true)
				case "del":
					got = tab.deleted(s.uid)
				case "sweep":
					got = tab.sweep(now)
				case "seed":
					tab.seed(e, now)
				}
				var states []state
				for _, g := range got {
					states = append(states, g.State)
				}
				assert.Equal(t, s.want, states, "step %d", i)
				if s.wantCnt != 0 && len(got) > 0 {
					assert.Equal(t, s.wantCnt, got[len(got)-1].Event.Count, "step %d count", i)
				}
			}
			assert.LessOrEqual(t, len(tab.open), 3)
		})
	}
}

// TestSeriesTableBounded feeds 100,000 Events across 1,000 objects, a fifth of them series,
// through a table of 2,000 open series: it never holds more, counts what it evicted, and keeps
// no singleton at all.
func TestSeriesTableBounded(t *testing.T) {
	timers := testTimers()
	timers.MaxOpen = 2000
	tab := newSeriesTable(timers)
	emitted := 0
	for i := 0; i < 100000; i++ {
		count := int32(1)
		if i%5 == 0 {
			count = 2
		}
		e := event{
			UID: fmt.Sprintf("ev-%d", i), Namespace: "ns", Count: count,
			First: t0, Last: t0.Add(time.Duration(i) * time.Millisecond),
		}
		e.Regarding.Name = fmt.Sprintf("pod-%d", i%1000)
		emitted += len(tab.observe(e, e.Last, true, true))
		assert.LessOrEqual(t, len(tab.open), 2000)
	}
	assert.Equal(t, 100000, emitted, "one record per Event")
	assert.Len(t, tab.open, 2000)
	assert.Equal(t, int64(20000-2000), tab.evicted)
}

// TestSeriesKeepsItsContext: a series' context is read once, when it opens, and every later
// transition of the series carries it (design.md rule 9.6).
func TestSeriesKeepsItsContext(t *testing.T) {
	tab := newSeriesTable(testTimers())
	reads := 0
	tab.capture = func(*event) objContext {
		reads++
		return objContext{sc: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{byte(reads)}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled}), link: true}
	}
	now := t0
	start := tab.observe(ev("a", 2, 0, false), now, true, true)
	require.Len(t, start, 1)
	ongoing := tab.observe(ev("a", 3, time.Second, false), now.Add(time.Second), false, true)
	require.Len(t, ongoing, 1)
	finished := tab.deleted("a")
	require.Len(t, finished, 1)
	assert.Equal(t, 1, reads)
	for _, tr := range [][]transition{start, ongoing, finished} {
		assert.True(t, tr[0].Context.read)
		assert.Equal(t, trace.TraceID{1}, tr[0].Context.sc.TraceID(), tr[0].State.String())
		assert.True(t, tr[0].Context.link, "the relation is captured with the context: %s", tr[0].State)
	}
	single := tab.observe(ev("b", 1, 0, false), now, true, true)
	require.Len(t, single, 1)
	assert.False(t, single[0].Context.read, "a singleton's context is read when it is emitted")
}
