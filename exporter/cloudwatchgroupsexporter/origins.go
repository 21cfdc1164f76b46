// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

import (
	"sync/atomic"
)

// origin is one queue item: a request convert made or the persistent queue read back. Two
// things follow it through the batcher's merges and splits (design.md, 5a and 5b):
//   - the queue keeps its whole size (units) until every batch that took events from it is
//     sent, so a partial batch holding a few of its events holds all of it;
//   - its messages live in the chunks of the arena route wrote them to (arena; none for an
//     item read back), which go back to the buffer pool when the last request holding its
//     events is delivered (refs).
type origin struct {
	units int64
	arena [][]byte
	// refs counts the requests holding events of the item.
	refs atomic.Int32
}

// originRun is n consecutive events of one origin.
type originRun struct {
	o *origin
	n int
}

// origins are the queue items a request holds events of, in the order of its events when it
// has one stream, and what the queue keeps for them (units, each item once: a request never
// holds two runs of one item apart, as a split sends every piece but the last and a
// partition keeps one).
type origins struct {
	runs  []originRun
	units int64
}

// enter makes r a queue item of its own, holding the arena chunks route wrote its messages
// to: the gate (nil when there is none) counts it and its pieces by the item's size.
func (g *partialGate) enter(r *eventsRequest) {
	r.gate = g
	if r.events == 0 {
		releaseChunks(r.arena)
		r.arena = nil
		return
	}
	var u int64
	if g != nil {
		u = g.units(r)
	}
	o := &origin{units: u, arena: r.arena}
	o.refs.Store(1)
	r.arena = nil
	r.origins = origins{runs: []originRun{{o: o, n: r.events}}, units: u}
}

// add appends other's runs after these (other's holder merges into this one), joining a run
// to the one before it when both are of the same item.
func (og *origins) add(other origins) {
	for _, run := range other.runs {
		if n := len(og.runs); n > 0 && og.runs[n-1].o == run.o {
			og.runs[n-1].n += run.n
			run.o.refs.Add(-1) // two holders became one
			continue
		}
		og.runs = append(og.runs, run)
		og.units += run.o.units
	}
}

// events is the number of events the runs cover.
func (og *origins) events() int {
	n := 0
	for _, run := range og.runs {
		n += run.n
	}
	return n
}

// split hands the runs to pieces of counts[i] events each, in order: the runs must be in event
// order (a request of one stream). Each item is held once more for every further piece
// holding its events.
func (og *origins) split(counts []int) []origins {
	out := make([]origins, len(counts))
	i, left := 0, 0 // the run being handed out and how many of its events are not yet
	if len(og.runs) > 0 {
		left = og.runs[0].n
	}
	for p, c := range counts {
		for c > 0 && i < len(og.runs) {
			run := og.runs[i]
			take := min(c, left)
			out[p].runs = append(out[p].runs, originRun{o: run.o, n: take})
			out[p].units += run.o.units
			c -= take
			left -= take
			if left == 0 {
				i++
				if i < len(og.runs) {
					left = og.runs[i].n
				}
			}
		}
	}
	og.hold(out)
	return out
}

// share gives every piece all the runs: a request mixing streams is not cut in the items'
// order, so each piece is taken to hold events of every item (the arenas wait for all of
// them; the gate counts more than the queue keeps).
func (og *origins) share(pieces int) []origins {
	out := make([]origins, pieces)
	for p := range out {
		out[p] = origins{runs: append([]originRun(nil), og.runs...), units: og.units}
	}
	og.hold(out)
	return out
}

// hold counts the pieces' holds on their items in place of the one og had.
func (og *origins) hold(pieces []origins) {
	for _, p := range pieces {
		for _, run := range p.runs {
			run.o.refs.Add(1)
		}
	}
	og.release(false)
}

// release drops the holder's claim on its items; with free, the arena chunks of an item no
// other request holds go back to the buffer pool (the caller reads none of its messages
// again). Without, they are left to the garbage collector.
func (og *origins) release(free bool) {
	for _, run := range og.runs {
		if run.o.refs.Add(-1) == 0 && free {
			releaseChunks(run.o.arena)
			run.o.arena = nil
		}
	}
	*og = origins{}
}
