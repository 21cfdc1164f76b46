// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// maxOwnerHops bounds the owner walk (design.md rule 5): an object and at most 7 owners above it.
const maxOwnerHops = 8

// groupKind is a kind with its API group.
type groupKind struct{ group, kind string }

// nameKey identifies an object by kind and name.
type nameKey struct {
	group, kind, namespace, name string
}

// record is what a watch event or a fetch says about one object (design.md rule 2).
type record struct {
	key     nameKey
	sc      trace.SpanContext
	link    bool      // sc is to be linked to, not parented under (tracing.k8s.io/traceparent)
	owner   string    // controller owner uid; empty when none of a configured kind
	fetched time.Time // when fetched on demand (node scope); zero for watched objects
	// wait: the owner is being read again for this object (design.md rule 7, re-read): it
	// resolves to no context until release(owner), rather than to the owner's older context.
	wait bool
}

// objKey is a nameKey with the kind as its index in the store's kinds.
type objKey struct {
	kind            int
	namespace, name string
}

// held is one object the store holds.
type held struct {
	uid     string
	key     objKey
	own     *ownContext // its own context; nil when it has none (most objects)
	owner   *dependents // the dependents of its controller owner; nil when none
	pos     int32       // its index in owner.list
	ent     int32       // its entry in the resolved table; -1 when its effective context is empty
	fetched int64       // unix ns when fetched on demand (node scope); 0 for watched objects
	wait    bool        // resolves to no context until its owner is read again (record.wait)
}

// ownContext is the context an object carries itself and its relation (tracesource.Source).
type ownContext struct {
	sc   trace.SpanContext
	link bool
}

// ownerUID returns h's controller owner uid, or "".
func (h *held) ownerUID() string {
	if h.owner == nil {
		return ""
	}
	return h.owner.uid
}

// dependents are the held objects whose controller owner is uid (held or not).
type dependents struct {
	uid  string
	list []*held
}

// store holds objects by uid and by name, bounded by max (design.md rules 3 and 4), the
// dependents of each owner uid, and the resolved table the lookups read (rule 4).
type store struct {
	mu       sync.RWMutex
	max      int
	kinds    []groupKind
	kindLens uint64 // bit n is set when a kind's name is n bytes long: most other kinds fail this test
	byUID    map[string]*held
	byName   map[objKey]*held // the newest object of a name
	children map[string]*dependents
	table    resolvedTable
	// onCount reports a change of the count of kind by delta; onDrop reports an object not held.
	onCount func(kind string, delta int64)
	onDrop  func()
}

func newStore(maxObjects int, kinds []groupKind, onCount func(kind string, delta int64), onDrop func()) *store {
	s := &store{
		max: maxObjects, kinds: kinds,
		byUID: map[string]*held{}, byName: map[objKey]*held{}, children: map[string]*dependents{},
		onCount: onCount, onDrop: onDrop,
	}
	s.table.init()
	names := make([]string, 0, len(kinds))
	for _, k := range kinds {
		if len(k.kind) < 64 {
			s.kindLens |= 1 << len(k.kind)
		}
		names = append(names, k.kind)
	}
	s.table.names.SetKinds(names)
	return s
}

// kindIndex returns the index of group/kind in the store's kinds, or false when it is not held.
func (s *store) kindIndex(group, kind string) (int, bool) {
	if len(kind) >= 64 || s.kindLens&(1<<len(kind)) == 0 {
		return 0, false
	}
	for i := range s.kinds {
		if s.kinds[i].kind == kind && s.kinds[i].group == group {
			return i, true
		}
	}
	return 0, false
}

// kindOf is kindIndex with the group taken from apiVersion ("apps/v1", or "v1" for the core
// group); a kind not held (a Node) fails the length test before apiVersion is read.
func (s *store) kindOf(apiVersion, kind string) (int, bool) {
	if len(kind) >= 64 || s.kindLens&(1<<len(kind)) == 0 {
		return 0, false
	}
	group := apiVersion[:0]
	for i := 0; i < len(apiVersion); i++ {
		if apiVersion[i] == '/' {
			group = apiVersion[:i]
			break
		}
	}
	for i := range s.kinds {
		if s.kinds[i].kind == kind && s.kinds[i].group == group {
			return i, true
		}
	}
	return 0, false
}

// find is the lookup of SpanContextForObject: by uid when given, else by group (from
// apiVersion), kind, namespace and name; the entry of the object found, with its effective
// context, or nil.
func (s *store) find(apiVersion, kind, namespace, name, uid string) *resolvedEntry {
	k, ok := s.kindOf(apiVersion, kind)
	if !ok {
		return nil
	}
	if uid != "" {
		return s.table.getUID(s.table.uidHash(uid), uid)
	}
	key := objKey{kind: k, namespace: namespace, name: name}
	return s.table.getName(s.table.nameHash(key), key)
}

// lookup is find by uid when given, else by a nameKey, for the tests.
func (s *store) lookup(uid string, key nameKey) (trace.SpanContext, bool) {
	c, ok := s.lookupRelation(uid, key)
	return c.sc, ok
}

// lookupRelation is lookup with the context's relation, for the tests.
func (s *store) lookupRelation(uid string, key nameKey) (ownContext, bool) {
	var e *resolvedEntry
	if uid != "" {
		e = s.table.getUID(s.table.uidHash(uid), uid)
	} else if k, ok := s.kindIndex(key.group, key.kind); ok {
		ok := objKey{kind: k, namespace: key.namespace, name: key.name}
		e = s.table.getName(s.table.nameHash(ok), ok)
	}
	if e == nil {
		return ownContext{}, false
	}
	return ownContext{sc: e.spanContext(), link: e.link}, true
}

// put stores or replaces the record of uid; a record with neither context nor owner removes it.
func (s *store) put(uid string, r record) {
	if !r.sc.IsValid() && r.owner == "" {
		s.remove(uid)
		return
	}
	k, ok := s.kindIndex(r.key.group, r.key.kind)
	if !ok {
		return
	}
	key := objKey{kind: k, namespace: r.key.namespace, name: r.key.name}
	var fetched int64
	if !r.fetched.IsZero() {
		fetched = r.fetched.UnixNano()
	}
	movedFrom := ""
	s.mu.Lock()
	h, had := s.byUID[uid]
	switch {
	case !had && len(s.byUID) >= s.max:
		s.mu.Unlock()
		s.onDrop()
		return
	case !had:
		h = &held{uid: uid, key: key, pos: -1, ent: -1}
		s.byUID[uid] = h
		s.claimName(h)
	default:
		h.fetched = fetched
		if h.key == key && sameContext(h.own, r.sc, r.link) && h.ownerUID() == r.owner && h.wait == r.wait {
			s.mu.Unlock() // most updates (a Pod's status) change nothing the store keeps
			return
		}
		if h.key != key {
			s.releaseName(h)
			if h.key.kind != key.kind { // not done by the API server (a uid is one object's)
				movedFrom = s.kinds[h.key.kind].kind
			}
			h.key = key
			s.claimName(h)
		}
	}
	h.fetched = fetched
	h.wait = r.wait
	if !sameContext(h.own, r.sc, r.link) {
		h.own = nil
		if r.sc.IsValid() {
			h.own = &ownContext{sc: r.sc, link: r.link}
		}
	}
	s.setOwner(h, r.owner)
	s.resolveFrom(uid, h)
	s.mu.Unlock()
	if movedFrom != "" {
		s.onCount(movedFrom, -1)
	}
	if !had || movedFrom != "" {
		s.onCount(r.key.kind, 1)
	}
}

// sameContext reports whether own (nil: none) is sc (invalid: none) with relation link.
func sameContext(own *ownContext, sc trace.SpanContext, link bool) bool {
	if !sc.IsValid() {
		return own == nil
	}
	return own != nil && own.sc.Equal(sc) && own.link == link
}

// claimName makes h its name's newest object; the object that was loses its name slot.
func (s *store) claimName(h *held) {
	prev := s.byName[h.key]
	s.byName[h.key] = h
	if prev != nil && prev != h {
		s.resolve(prev)
	}
}

// releaseName removes h from the name index when it is its name's newest object.
func (s *store) releaseName(h *held) {
	if s.byName[h.key] == h {
		delete(s.byName, h.key)
	}
}

// setOwner links h to the dependents of owner (none when "").
func (s *store) setOwner(h *held, owner string) {
	if h.ownerUID() == owner {
		return
	}
	s.unlink(h)
	if owner == "" {
		return
	}
	d := s.children[owner]
	if d == nil {
		d = &dependents{uid: owner}
		s.children[owner] = d
	}
	h.owner, h.pos = d, int32(len(d.list)) //nolint:gosec // at most max_objects dependents
	d.list = append(d.list, h)
}

// unlink removes h from its owner's dependents.
func (s *store) unlink(h *held) {
	d := h.owner
	if d == nil {
		return
	}
	last := len(d.list) - 1
	d.list[h.pos] = d.list[last]
	d.list[h.pos].pos = h.pos
	d.list[last] = nil
	d.list = d.list[:last]
	if last == 0 {
		delete(s.children, d.uid)
	}
	h.owner, h.pos = nil, -1
}

// effective walks from h along controller owners to the first object with a context of its own
// (design.md rule 5), with that object's relation (rule 10).
func (s *store) effective(h *held) (ownContext, bool) {
	for range maxOwnerHops {
		if h == nil || h.wait {
			return ownContext{}, false
		}
		if h.own != nil {
			return *h.own, true
		}
		if h.owner == nil {
			return ownContext{}, false
		}
		h = s.byUID[h.owner.uid]
	}
	return ownContext{}, false
}

// resolve brings h's entry in the resolved table up to date: present when its effective context
// is non-empty, in the name slots when it is its name's newest object.
func (s *store) resolve(h *held) {
	if c, ok := s.effective(h); ok {
		s.table.set(h, c, s.byName[h.key] == h)
	} else {
		s.table.del(h)
	}
}

// resolveFrom resolves self (when held) and every held object whose owner walk reaches uid
// within maxOwnerHops: its dependents, theirs, and so on (design.md rule 4). Owner chains are
// short (Deployment, ReplicaSet, Pod), and each object has one controller owner, so this visits
// each dependent once.
func (s *store) resolveFrom(uid string, self *held) {
	if self != nil {
		s.resolve(self)
	}
	d := s.children[uid]
	if d == nil {
		return
	}
	level := d.list
	for depth := 1; depth < maxOwnerHops && len(level) > 0; depth++ {
		var next []*held
		for _, h := range level {
			s.resolve(h)
			if d := s.children[h.uid]; d != nil {
				next = append(next, d.list...)
			}
		}
		level = next
	}
}

// release ends the wait of owner's dependents (its read is over, whatever its outcome) and
// resolves them and theirs.
func (s *store) release(owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.children[owner]
	if d == nil {
		return
	}
	for _, h := range d.list {
		if h.wait {
			h.wait = false
			s.resolveFrom(h.uid, h)
		}
	}
}

// remove forgets uid.
func (s *store) remove(uid string) {
	s.mu.Lock()
	h, had := s.byUID[uid]
	if had {
		s.drop(h)
	}
	s.mu.Unlock()
	if had {
		s.onCount(s.kinds[h.key.kind].kind, -1)
	}
}

// drop forgets h and resolves its dependents again.
func (s *store) drop(h *held) {
	delete(s.byUID, h.uid)
	s.releaseName(h)
	s.table.del(h)
	s.unlink(h)
	s.resolveFrom(h.uid, nil)
}

// fetchedAt returns when uid was fetched on demand and whether it is held.
func (s *store) fetchedAt(uid string) (time.Time, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h, ok := s.byUID[uid]
	if !ok || h.fetched == 0 {
		return time.Time{}, ok
	}
	return time.Unix(0, h.fetched), true
}

// uidsOf returns the uids held of group/kind, for a relist (Replace).
func (s *store) uidsOf(group, kind string) map[string]bool {
	out := map[string]bool{}
	k, ok := s.kindIndex(group, kind)
	if !ok {
		return out
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for uid, h := range s.byUID {
		if h.key.kind == k {
			out[uid] = true
		}
	}
	return out
}

// len returns the number of objects held.
func (s *store) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.byUID)
}

// dropUnreferenced forgets the objects fetched on demand (owners, in node scope) that no held
// object names as its owner any more, and returns how many. An owner whose dependents are gone
// goes at the first call, its own owner at the next.
func (s *store) dropUnreferenced() int {
	s.mu.Lock()
	var gone []*held
	for uid, h := range s.byUID {
		if h.fetched != 0 && s.children[uid] == nil {
			gone = append(gone, h)
		}
	}
	for _, h := range gone {
		s.drop(h)
	}
	s.mu.Unlock()
	for _, h := range gone {
		s.onCount(s.kinds[h.key.kind].kind, -1)
	}
	return len(gone)
}
