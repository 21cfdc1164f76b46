// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

var tokenRE = regexp.MustCompile(`nodesim:(c[0-9]+):([0-9]+)`)

// Account compares what the simulator wrote with what the local server stored.
type Account struct {
	Written    int64 // lines in the ledger
	Stored     int64 // events stored in every group
	Matched    int64 // distinct written lines found
	Missing    int64 // written lines never stored
	Duplicated int64 // extra copies of stored lines
	// OutOfOrder counts lines stored with a timestamp earlier than that of a line the same
	// container wrote before them: a reader of the stream (GetLogEvents orders by timestamp)
	// sees them in the wrong order.
	OutOfOrder int64
	// ArrivalInversions counts events stored (arrived) before a line written earlier by the same
	// container. Parallel batches make this legitimate, and so does a line finished between the
	// pieces of a longer one; readers order by timestamp, ties (same millisecond) by arrival.
	ArrivalInversions int64
	Untracked         int64 // stored events without a simulator token
	Merged            int64 // stored events carrying more than one token
	StrayStreams      int64 // containers whose lines went to more than one stream
	Examples          []string
}

// OK reports whether every line arrived exactly once, in order. Lines of one container in more
// than one group or stream (StrayStreams) are a routing fault checked on its own.
func (a Account) OK() bool {
	return a.Missing == 0 && a.Duplicated == 0 && a.OutOfOrder == 0 && a.Untracked == 0 &&
		a.Merged == 0 && a.Matched == a.Written
}

func (a Account) String() string {
	s := fmt.Sprintf("written %d, stored %d, matched %d, missing %d, duplicated %d, out of order %d (arrival inversions %d), untracked %d, merged %d, stray streams %d",
		a.Written, a.Stored, a.Matched, a.Missing, a.Duplicated, a.OutOfOrder, a.ArrivalInversions, a.Untracked, a.Merged, a.StrayStreams)
	if len(a.Examples) > 0 {
		s += "\n  " + strings.Join(a.Examples, "\n  ")
	}
	return s
}

type seen struct {
	seq     int64
	ts      int64
	arrival int
	msg     string
}

// Store is what Reconcile reads: *localcloudwatch.Server.
type Store interface {
	Groups() []localcloudwatch.GroupInfo
	Streams(group string) ([]localcloudwatch.StreamInfo, error)
	Events(group, stream string) ([]localcloudwatch.Event, error)
}

// Reconcile accounts for every line of ledger in the events srv stored.
func Reconcile(srv Store, ledger nodesim.Ledger) Account {
	a := Account{Written: 0}
	want := make(map[string]int64, len(ledger.Containers))
	unstamped := map[string]map[int64]bool{}
	for _, c := range ledger.Containers {
		want[c.ID] = c.Lines
		a.Written += c.Lines
		for _, seq := range c.Unstamped {
			if unstamped[c.ID] == nil {
				unstamped[c.ID] = map[int64]bool{}
			}
			unstamped[c.ID][seq] = true
		}
	}
	byContainer := map[string][]seen{}
	streamOf := map[string]string{}
	example := func(format string, args ...any) {
		if len(a.Examples) < 10 {
			a.Examples = append(a.Examples, fmt.Sprintf(format, args...))
		}
	}
	for _, g := range srv.Groups() {
		streams, err := srv.Streams(g.Name)
		if err != nil {
			continue
		}
		for _, st := range streams {
			events, err := srv.Events(g.Name, st.Name)
			if err != nil {
				continue
			}
			where := g.Name + " " + st.Name
			for i, e := range events {
				a.Stored++
				m := tokenRE.FindAllStringSubmatch(e.Message, -1)
				if len(m) == 0 {
					a.Untracked++
					example("untracked event in %s: %.200q", where, e.Message)
					continue
				}
				if len(m) > 1 {
					a.Merged++
					example("event with %d tokens in %s: %.200q", len(m), where, e.Message)
				}
				id := m[0][1]
				seq, _ := strconv.ParseInt(m[0][2], 10, 64)
				if prev, ok := streamOf[id]; ok && prev != where {
					a.StrayStreams++
					example("container %s in %s and %s", id, prev, where)
				}
				streamOf[id] = where
				byContainer[id] = append(byContainer[id], seen{seq: seq, ts: e.Timestamp, arrival: i, msg: shorten(e.Message, 160)})
			}
		}
	}
	for id, n := range want {
		got := byContainer[id]
		count := make(map[int64]int, len(got))
		for _, s := range got {
			count[s.seq]++
		}
		for seq := int64(1); seq <= n; seq++ {
			switch c := count[seq]; c {
			case 0:
				a.Missing++
				example("missing %s", nodesim.Token(id, seq))
			default:
				a.Matched++
				a.Duplicated += int64(c - 1)
				if c > 1 {
					example("%s stored %d times", nodesim.Token(id, seq), c)
				}
			}
		}
		var maxSeq int64
		for _, s := range got { // arrival order
			if s.seq < maxSeq {
				a.ArrivalInversions++
			}
			maxSeq = max(maxSeq, s.seq)
		}
		sort.SliceStable(got, func(i, j int) bool { return got[i].seq < got[j].seq })
		var last seen
		for _, s := range got { // written order; lines without a timestamp have no place in it
			if unstamped[id][s.seq] {
				continue
			}
			if s.ts < last.ts {
				a.OutOfOrder++
				example("%s has an earlier timestamp than %s: %d %s < %d %s", nodesim.Token(id, s.seq), nodesim.Token(id, last.seq),
					s.ts, s.msg, last.ts, last.msg)
				continue
			}
			last = s
		}
	}
	for id := range byContainer {
		if _, ok := want[id]; !ok {
			a.Untracked += int64(len(byContainer[id]))
			example("events of unknown container %s", id)
		}
	}
	return a
}
