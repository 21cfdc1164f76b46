// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// restartTable is a restart: the table's state goes through the checkpoint's encoding into a
// fresh table, as a new process (or the next leader, term+1) loads it.
func restartTable(t *testing.T, tab *seriesTable) *seriesTable {
	t.Helper()
	cp := &checkpoint{Term: tab.term, ResourceVersions: map[string]string{"": "1"}, Series: tab.snapshot()}
	dec, err := decodeCheckpoint(cp.encode())
	require.NoError(t, err)
	next := newSeriesTable(tab.t)
	next.term = tab.term + 1
	next.restore(dec.Series)
	return next
}

// written is ev with a write time (managedFields, second precision).
func written(e event, at time.Duration) event {
	e.Written = t0.Add(at).Truncate(time.Second)
	return e
}

// TestWriteTimeRule drives one new-recorder series through a restart at each moment of
// design.md rule 3.1 (the previous run's table is lost, only the checkpoint survives), with
// the relist seeing the Event at or below the checkpoint ("seed") or above it ("list", a write
// made while nobody watched). Every series: one start, one finished with the final count,
// ongoing only for counts written, never a second start. Times: finish window 6m, heartbeat
// timeout 40m, recorder heartbeat every 30m.
func TestWriteTimeRule(t *testing.T) {
	type op struct {
		at      time.Duration
		kind    string // watch, seed, list, sweep, restart
		count   int32
		last    time.Duration
		wrote   time.Duration // write time; -1: unknown (no managedFields entry owns series)
		want    []state
		wantCnt int32
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{"restart right after a write", []op{
			{at: 0, kind: "watch", count: 2, wrote: 0, want: []state{stateStart}},
			{at: 10 * time.Second, kind: "restart"},
			{at: 11 * time.Second, kind: "seed", count: 2, wrote: 0},
			{at: 30 * time.Minute, kind: "watch", count: 9, last: 29 * time.Minute, wrote: 30 * time.Minute, want: []state{stateOngoing}, wantCnt: 9},
			{at: 44 * time.Minute, kind: "watch", count: 11, last: 37 * time.Minute, wrote: 44 * time.Minute, want: []state{stateFinished}, wantCnt: 11},
		}},
		{"restart between two heartbeats, more than the finish window after the last write", []op{
			{at: 0, kind: "watch", count: 2, wrote: 0, want: []state{stateStart}},
			{at: 20 * time.Minute, kind: "restart"},
			// receive time says 20m > 6m (the old rule finished or tombstoned it here); the
			// write time says 0m: a live series
			{at: 20 * time.Minute, kind: "seed", count: 2, wrote: 0},
			{at: 25 * time.Minute, kind: "sweep"},
			{at: 30 * time.Minute, kind: "watch", count: 9, last: 29 * time.Minute, wrote: 30 * time.Minute, want: []state{stateOngoing}, wantCnt: 9},
			{at: 44 * time.Minute, kind: "watch", count: 11, last: 37 * time.Minute, wrote: 44 * time.Minute, want: []state{stateFinished}, wantCnt: 11},
		}},
		{"down across a heartbeat: the relist finds it above the checkpoint, open in the previous run", []op{
			{at: 0, kind: "watch", count: 2, wrote: 0, want: []state{stateStart}},
			{at: 5 * time.Minute, kind: "restart"},
			{at: 40 * time.Minute, kind: "list", count: 9, last: 29 * time.Minute, wrote: 30 * time.Minute, want: []state{stateOngoing}, wantCnt: 9},
			{at: 44 * time.Minute, kind: "watch", count: 11, last: 37 * time.Minute, wrote: 44 * time.Minute, want: []state{stateFinished}, wantCnt: 11},
			{at: 90 * time.Minute, kind: "sweep"},
		}},
		{"restart after an invisible final write, before the silence timer", []op{
			{at: 0, kind: "watch", count: 2, wrote: 0, want: []state{stateStart}},
			{at: 30 * time.Minute, kind: "watch", count: 9, last: 29 * time.Minute, wrote: 30 * time.Minute, want: []state{stateOngoing}},
			// the recorder's final write at 36m repeats the heartbeat's content: no change, no
			// notification, no new managedFields time
			{at: 50 * time.Minute, kind: "restart"},
			{at: 50 * time.Minute, kind: "seed", count: 9, last: 29 * time.Minute, wrote: 30 * time.Minute},
			{at: 69 * time.Minute, kind: "sweep"},
			// silence counts from the write (30m), not from the restart (50m)
			{at: 71 * time.Minute, kind: "sweep", want: []state{stateFinished}, wantCnt: 9},
			{at: 100 * time.Minute, kind: "sweep"},
		}},
		{"restart after the final write, which the previous run emitted", []op{
			{at: 0, kind: "watch", count: 2, wrote: 0, want: []state{stateStart}},
			{at: 12 * time.Minute, kind: "watch", count: 4, last: 5 * time.Minute, wrote: 12 * time.Minute, want: []state{stateFinished}, wantCnt: 4},
			{at: 13 * time.Minute, kind: "restart"},
			{at: 13 * time.Minute, kind: "seed", count: 4, last: 5 * time.Minute, wrote: 12 * time.Minute},
			{at: 60 * time.Minute, kind: "sweep"},
		}},
		{"the final write happens while down: the relist finishes it once", []op{
			{at: 0, kind: "watch", count: 2, wrote: 0, want: []state{stateStart}},
			{at: 3 * time.Minute, kind: "restart"},
			{at: 15 * time.Minute, kind: "list", count: 4, last: 5 * time.Minute, wrote: 12 * time.Minute, want: []state{stateFinished}, wantCnt: 4},
			{at: 16 * time.Minute, kind: "restart"},
			{at: 16 * time.Minute, kind: "seed", count: 4, last: 5 * time.Minute, wrote: 12 * time.Minute},
			{at: 90 * time.Minute, kind: "sweep"},
		}},
		{"finished by silence, then restarted: the checkpoint's tombstone holds", []op{
			{at: 0, kind: "watch", count: 2, wrote: 0, want: []state{stateStart}},
			{at: 41 * time.Minute, kind: "sweep", want: []state{stateFinished}, wantCnt: 2},
			{at: 42 * time.Minute, kind: "restart"},
			{at: 42 * time.Minute, kind: "seed", count: 2, wrote: 0},
			{at: 43 * time.Minute, kind: "sweep"},
		}},
		{"series first seen in a list, written long ago but not finally: open, silence from the write", []op{
			{at: 20 * time.Minute, kind: "list", count: 5, last: 10 * time.Minute, wrote: 10 * time.Minute, want: []state{stateStart}},
			{at: 51 * time.Minute, kind: "sweep", want: []state{stateFinished}, wantCnt: 5},
		}},
		{"no write time on a list: not final, the silence timer decides from now", []op{
			{at: 0, kind: "watch", count: 2, wrote: 0, want: []state{stateStart}},
			{at: 20 * time.Minute, kind: "restart"},
			{at: 20 * time.Minute, kind: "seed", count: 3, last: 5 * time.Minute, wrote: -1},
			{at: 59 * time.Minute, kind: "sweep"},
			{at: 61 * time.Minute, kind: "sweep", want: []state{stateFinished}, wantCnt: 3},
		}},
		{"second precision: a write within a second of the window is not final", []op{
			{at: 0, kind: "watch", count: 2, wrote: 0, want: []state{stateStart}},
			// written at 6m0.9s (recorded as 6m0s), last at 0: 6m0.9s > 6m in truth, but the
			// write time the API keeps only proves 6m0s; the silence timer finishes it
			{at: 6*time.Minute + 900*time.Millisecond, kind: "watch", count: 3, last: 0, wrote: 6*time.Minute + 900*time.Millisecond, want: []state{stateOngoing}},
			{at: 47 * time.Minute, kind: "sweep", want: []state{stateFinished}, wantCnt: 3},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := newSeriesTable(testTimers())
			starts, finishes := 0, 0
			for i, o := range tt.ops {
				now := t0.Add(o.at)
				e := ev("s", o.count, o.last, false)
				if o.wrote >= 0 {
					e = written(e, o.wrote)
				}
				var got []transition
				switch o.kind {
				case "watch":
					got = tab.observe(e, now, false, true)
				case "list":
					got = tab.observe(e, now, true, false)
				case "seed":
					tab.seed(e, now)
				case "sweep":
					got = tab.sweep(now)
				case "restart":
					tab = restartTable(t, tab)
				}
				var states []state
				for _, g := range got {
					states = append(states, g.State)
					switch g.State {
					case stateStart:
						starts++
					case stateFinished:
						finishes++
					}
				}
				assert.Equal(t, o.want, states, "op %d (%s at %s)", i, o.kind, o.at)
				if o.wantCnt != 0 && len(got) > 0 {
					assert.Equal(t, o.wantCnt, got[len(got)-1].Event.Count, "op %d count", i)
				}
			}
			assert.LessOrEqual(t, starts, 1, "never a second start")
			assert.LessOrEqual(t, finishes, 1, "never a second finish")
		})
	}
}

// TestSeriesWriteTime reads the write time from managedFields as the API server writes them.
func TestSeriesWriteTime(t *testing.T) {
	at := func(s string) *metav1.Time { tm, _ := time.Parse(time.RFC3339, s); return &metav1.Time{Time: tm} }
	entry := func(manager, fields string, tm *metav1.Time) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: "Update", Time: tm, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	tests := []struct {
		name string
		mf   []metav1.ManagedFieldsEntry
		want string
	}{
		{"the recorder's entry owns series", []metav1.ManagedFieldsEntry{
			entry("kubelet", `{"f:action":{},"f:series":{".":{},"f:count":{},"f:lastObservedTime":{}}}`, at("2026-11-27T10:00:05Z")),
			entry("kubectl-label", `{"f:metadata":{"f:labels":{"f:team":{}}}}`, at("2026-11-27T11:00:00Z")),
		}, "2026-11-27T10:00:05Z"},
		{"a label named series is not the series", []metav1.ManagedFieldsEntry{
			entry("kubectl-label", `{"f:metadata":{"f:labels":{"f:series":{}}}}`, at("2026-11-27T11:00:00Z")),
		}, ""},
		{"two owners: the later", []metav1.ManagedFieldsEntry{
			entry("a", `{"f:series":{"f:count":{}}}`, at("2026-11-27T10:00:05Z")),
			entry("b", `{"f:series":{"f:lastObservedTime":{}}}`, at("2026-11-27T10:30:05Z")),
		}, "2026-11-27T10:30:05Z"},
		{"no time", []metav1.ManagedFieldsEntry{entry("a", `{"f:series":{}}`, nil)}, ""},
		{"broken fields", []metav1.ManagedFieldsEntry{entry("a", `{"f:series":`, at("2026-11-27T10:00:05Z"))}, ""},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := seriesWriteTime(tt.mf)
			if tt.want == "" {
				assert.True(t, got.IsZero(), "%s", got)
				return
			}
			assert.Equal(t, tt.want, got.UTC().Format(time.RFC3339))
		})
	}
}

// TestCheckpointSize: 100,000 Events (90,000 singletons, 10,000 series) through a table of
// series.max_open 10,000, every series still open, plus 10,000 series finished by silence
// earlier (the tombstone bound): the encoded checkpoint stays under 512 KiB and decodes to
// what was encoded.
func TestCheckpointSize(t *testing.T) {
	timers := testTimers()
	timers.MaxOpen = 10000
	tab := newSeriesTable(timers)
	tab.term = 7
	for i := 0; i < 10000; i++ { // finished by silence before
		tab.addTomb(fmt.Sprintf("0b3c7a52-1d1e-4c1a-9d5e-%012d", i), int32(100+i), t0.Add(-time.Duration(i)*time.Second), true)
	}
	for i := 0; i < 100000; i++ {
		count := int32(1)
		if i%10 == 0 {
			count = int32(2 + i%5000)
		}
		e := event{
			UID: fmt.Sprintf("6f1d2c3b-0a9e-4f8d-b7c6-%012d", i), Namespace: "ns", Count: count,
			First: t0, Last: t0.Add(time.Duration(i) * time.Millisecond),
		}
		e.Written = e.Last.Truncate(time.Second)
		tab.observe(e, e.Last, true, true)
	}
	require.Len(t, tab.open, 10000)
	require.Len(t, tab.tombs, 10000)
	cp := &checkpoint{Term: 7, Holder: "otelcol-k8s-events-5d8f9c7b6-x2k4q", ResourceVersions: map[string]string{"": "123456789"}, Series: tab.snapshot()}
	b := cp.encode()
	t.Logf("checkpoint: %d series, %d bytes (%.1f per series)", len(cp.Series), len(b), float64(len(b))/float64(len(cp.Series)))
	assert.Less(t, len(b), 512<<10)
	dec, err := decodeCheckpoint(b)
	require.NoError(t, err)
	require.Len(t, dec.Series, len(cp.Series))
	for k, p := range cp.Series {
		q := dec.Series[k]
		assert.Equal(t, p.Count, q.Count)
		assert.Equal(t, p.Tomb, q.Tomb)
		assert.Equal(t, p.Term, q.Term)
		assert.True(t, p.At.Truncate(time.Second).Equal(q.At), "at %s %s", p.At, q.At)
		if !p.Tomb {
			assert.True(t, p.Last.Truncate(time.Microsecond).Equal(q.Last), "last %s %s", p.Last, q.Last)
		}
	}
	assert.Equal(t, cp.ResourceVersions, dec.ResourceVersions)
	assert.Equal(t, cp.Holder, dec.Holder)
}

// TestCheckpointDecodeRejects: a checkpoint that is not ours or is cut short is an error
// (errBadCheckpoint), never a panic or a half-read state.
func TestCheckpointDecodeRejects(t *testing.T) {
	tab := newSeriesTable(testTimers())
	tab.observe(written(ev("a", 2, 0, false), 0), t0, true, true)
	good := (&checkpoint{Term: 1, ResourceVersions: map[string]string{"": "5"}, Series: tab.snapshot()}).encode()
	for i := 1; i < len(good); i++ {
		if i == len(checkpointMagic) {
			continue
		}
		_, err := decodeCheckpoint(good[:i])
		require.ErrorIs(t, err, errBadCheckpoint, "cut at %d", i)
	}
	_, err := decodeCheckpoint([]byte(`{"resource_versions":{"":"5"}}`))
	assert.ErrorIs(t, err, errBadCheckpoint)
}

// TestCheckpointMerge is rule 5.7: a newer term's checkpoint fences an older one; merging an
// older term's late write keeps our resource versions, and per series the newer term wins.
func TestCheckpointMerge(t *testing.T) {
	at := t0
	ours := &checkpoint{Term: 5, ResourceVersions: map[string]string{"": "200"}, Series: map[uint64]priorSeries{
		1: {Count: 9, At: at, Term: 5},             // open, written by us
		2: {Count: 3, At: at, Term: 4},             // carried from term 4
		3: {Count: 4, At: at, Term: 4},             // carried open; term 4 finished it late
		4: {Count: 8, At: at, Term: 5, Tomb: true}, // we finished it
	}}
	theirs := &checkpoint{Term: 4, ResourceVersions: map[string]string{"": "150"}, Series: map[uint64]priorSeries{
		1: {Count: 7, At: at, Term: 4},
		3: {Count: 4, At: at, Term: 4, Tomb: true},
		4: {Count: 6, At: at, Term: 4},
		5: {Count: 2, At: at, Term: 4}, // opened by term 4's late batch
	}}
	got, err := ours.merge(theirs)
	require.NoError(t, err)
	assert.Equal(t, "200", got.ResourceVersions[""])
	assert.Equal(t, int64(5), got.Term)
	assert.Equal(t, map[uint64]priorSeries{
		1: {Count: 9, At: at, Term: 5},
		2: {Count: 3, At: at, Term: 4},
		3: {Count: 4, At: at, Term: 4, Tomb: true},
		4: {Count: 8, At: at, Term: 5, Tomb: true},
		5: {Count: 2, At: at, Term: 4},
	}, got.Series)

	_, err = theirs.merge(ours)
	assert.ErrorIs(t, err, errFenced, "a deposed term never overwrites a newer one")
}
