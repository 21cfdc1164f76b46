// SPDX-License-Identifier: Apache-2.0

package tracecontext

import (
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// maxOwnerHops bounds the owner walk (design.md rule 5).
const maxOwnerHops = 8

// nameKey identifies an object by kind and name.
type nameKey struct {
	group, kind, namespace, name string
}

// record is one held object (design.md rule 2).
type record struct {
	uid     string
	key     nameKey
	sc      trace.SpanContext
	owner   string    // controller owner uid; empty when none of a configured kind
	fetched time.Time // when fetched on demand (node scope); zero for watched objects
}

// store holds records by uid and by name, bounded by max (design.md rules 3 and 4).
type store struct {
	mu     sync.RWMutex
	max    int
	byUID  map[string]*record
	byName map[nameKey]*record // the newest record of a name: one map access for a lookup by name
	// contexts counts the records that carry a span context: while it is zero (a cluster where
	// nothing writes contexts) a lookup answers at once, without the lock or a map access.
	contexts atomic.Int64
	// onCount reports a change of the count of kind by delta; onDrop reports an object not held.
	onCount func(kind string, delta int64)
	onDrop  func()
}

func newStore(maxObjects int, onCount func(kind string, delta int64), onDrop func()) *store {
	return &store{max: maxObjects, byUID: map[string]*record{}, byName: map[nameKey]*record{}, onCount: onCount, onDrop: onDrop}
}

// put stores or replaces the record of uid; a record with neither context nor owner removes it.
func (s *store) put(uid string, r record) {
	if !r.sc.IsValid() && r.owner == "" {
		s.remove(uid)
		return
	}
	s.mu.Lock()
	old, had := s.byUID[uid]
	if !had && len(s.byUID) >= s.max {
		s.mu.Unlock()
		s.onDrop()
		return
	}
	if had && old.key != r.key && s.byName[old.key] == old {
		delete(s.byName, old.key)
	}
	r.uid = uid
	if had && old.sc.IsValid() {
		s.contexts.Add(-1)
	}
	if r.sc.IsValid() {
		s.contexts.Add(1)
	}
	s.byUID[uid] = &r
	s.byName[r.key] = &r
	s.mu.Unlock()
	if !had {
		s.onCount(r.key.kind, 1)
	}
}

// remove forgets uid.
func (s *store) remove(uid string) {
	s.mu.Lock()
	old, had := s.byUID[uid]
	if had {
		delete(s.byUID, uid)
		if s.byName[old.key] == old {
			delete(s.byName, old.key)
		}
		if old.sc.IsValid() {
			s.contexts.Add(-1)
		}
	}
	s.mu.Unlock()
	if had {
		s.onCount(old.key.kind, -1)
	}
}

// fetchedAt returns when uid was fetched on demand and whether it is held.
func (s *store) fetchedAt(uid string) (time.Time, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.byUID[uid]
	if !ok {
		return time.Time{}, false
	}
	return r.fetched, true
}

// uids returns the uids held for kinds in group/kind form, for a relist (Replace).
func (s *store) uidsOf(group, kind string) map[string]bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]bool{}
	for uid, r := range s.byUID {
		if r.key.group == group && r.key.kind == kind {
			out[uid] = true
		}
	}
	return out
}

// lookup finds the object by uid (when given) or by name, then walks its controller owners to the
// first record with a span context.
func (s *store) lookup(uid string, key nameKey) (trace.SpanContext, bool) {
	if s.contexts.Load() == 0 {
		return trace.SpanContext{}, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var r *record
	if uid == "" {
		r = s.byName[key]
	} else {
		r = s.byUID[uid]
	}
	for range maxOwnerHops {
		if r == nil {
			return trace.SpanContext{}, false
		}
		if r.sc.IsValid() {
			return r.sc, true
		}
		r = s.byUID[r.owner]
	}
	return trace.SpanContext{}, false
}

// len returns the number of records.
func (s *store) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.byUID)
}

// dropUnreferenced forgets the records fetched on demand (owners, in node scope) that no held
// record names as its owner any more, and returns how many. An owner whose dependents are gone
// goes at the first call, its own owner at the next.
func (s *store) dropUnreferenced() int {
	s.mu.Lock()
	referenced := make(map[string]bool, len(s.byUID))
	for _, r := range s.byUID {
		if r.owner != "" {
			referenced[r.owner] = true
		}
	}
	var gone []string
	for uid, r := range s.byUID {
		if !r.fetched.IsZero() && !referenced[uid] {
			delete(s.byUID, uid)
			if s.byName[r.key] == r {
				delete(s.byName, r.key)
			}
			if r.sc.IsValid() {
				s.contexts.Add(-1)
			}
			gone = append(gone, r.key.kind)
		}
	}
	s.mu.Unlock()
	for _, kind := range gone {
		s.onCount(kind, -1)
	}
	return len(gone)
}
