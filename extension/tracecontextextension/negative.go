// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import "time"

// negativeSet remembers the owner uids whose last read failed or found nothing to keep, and
// when (design.md rule 7). It holds at most max uids: when full, the uid remembered longest ago
// is forgotten first, so a flood of new owners costs the oldest entries one more GET each, never
// the recent ones. Not safe for concurrent use; the extension holds its lock.
type negativeSet struct {
	max   int
	at    map[string]time.Time
	order []negativeEntry // in the order remembered; an entry whose uid was remembered again later is stale
}

type negativeEntry struct {
	uid string
	at  time.Time
}

func newNegativeSet(maxUIDs int) *negativeSet {
	return &negativeSet{max: max(maxUIDs, 1), at: map[string]time.Time{}}
}

// get returns when uid was remembered, if it is.
func (s *negativeSet) get(uid string) (time.Time, bool) {
	at, ok := s.at[uid]
	return at, ok
}

// put remembers uid as read at at, forgetting the oldest uids beyond max.
func (s *negativeSet) put(uid string, at time.Time) {
	s.at[uid] = at
	s.order = append(s.order, negativeEntry{uid, at})
	for len(s.at) > s.max {
		s.evictOldest()
	}
	if len(s.order) > 2*s.max { // stale entries of uids remembered again: drop them
		live := s.order[:0]
		for _, e := range s.order {
			if cur, ok := s.at[e.uid]; ok && cur.Equal(e.at) {
				live = append(live, e)
			}
		}
		clear(s.order[len(live):])
		s.order = live
	}
}

// evictOldest forgets the uid remembered longest ago.
func (s *negativeSet) evictOldest() {
	for len(s.order) > 0 {
		e := s.order[0]
		s.order[0] = negativeEntry{}
		s.order = s.order[1:]
		if cur, ok := s.at[e.uid]; ok && cur.Equal(e.at) {
			delete(s.at, e.uid)
			return
		}
	}
}

// remove forgets uid (read since with something to keep). Its entry in order goes stale.
func (s *negativeSet) remove(uid string) { delete(s.at, uid) }

// len returns how many uids are remembered.
func (s *negativeSet) len() int { return len(s.at) }
