// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/namefilter"
)

const (
	// minSlots is the smallest slot array of the resolved table (a power of two).
	minSlots = 16
	// tombstone marks a deleted slot: a lookup goes on past it, an insert may reuse it.
	tombstone = ^uint64(0)
)

// resolvedTable holds, for the lookups, only the objects whose effective context (their own, or
// their nearest owner's) is non-empty (design.md rule 4). It is an open-addressing table with
// linear probing over two slot arrays, one keyed by name and one by uid, whose slots point into
// one array of entries. A slot is 8 bytes: the high 32 bits of the key's hash (they also choose
// the home slot) and the entry's index + 1; 0 is empty. At most half the slots hold objects, so
// a lookup of an object the table does not hold (most Pods) reads one or two slots of a small
// array that stays in cache, and a hit reads one entry, whose key it compares.
//
// Lookups take no lock: they read an immutable view (slot arrays and entries, replaced whole
// when the table is resized) through atomics, and entries are immutable (a changed context is a
// new entry at the same index). The writer (one at a time: the store's lock) never empties a
// slot of a published view, it marks it deleted (tombstone), so a lookup never stops short of a
// key present before it started; it also sees an entry before the slot that points to it.
type resolvedTable struct {
	// n is the number of entries: while it is zero a lookup answers at once.
	n    atomic.Int64
	view atomic.Pointer[resolvedView]
	seed maphash.Seed

	// names has the name of every entry: object_ref tests a record's object against it before
	// it asks (TraceContextNames). A deleted entry's name stays until namesStale passes the
	// number of entries; then, and at every rebuild, the filter is made afresh.
	names *namefilter.Filter

	// The writer's own state, under the store's lock.
	namesStale        int
	meta              []entryMeta // by entry index, as long as the view's entries
	free              []int32     // entry indexes free below next
	next              int32       // entry indexes from next on were never used in this view
	nameUsed, uidUsed int         // slots not empty (objects and tombstones), by array
}

// resolvedView is one generation of the table's arrays.
type resolvedView struct {
	mask uint64
	// filter has a bit per hash of every name in byName (8 bits per slot), so that most lookups
	// of an object the table does not hold end at one bit of a small array.
	filter  []atomic.Uint64
	byName  []atomic.Uint64
	byUID   []atomic.Uint64
	entries []atomic.Pointer[resolvedEntry] // len(slots)/2: at most half the slots hold objects
}

// resolvedEntry is one object's effective context, with its key for the lookups to compare:
// 128 bytes, two cache lines, holding the namespace and name themselves when they fit (so a hit
// reads nothing else).
type resolvedEntry struct {
	kind, nsLen, nameLen uint16
	flags                trace.TraceFlags
	remote               bool
	link                 bool // link to the context instead of parenting under it (rule 10)
	traceID              trace.TraceID
	spanID               trace.SpanID
	inline               [inlineKey]byte   // namespace then name, when they fit
	state                *trace.TraceState // nil when empty
	long                 string            // namespace then name, when they do not fit inline
	uid                  string
}

// inlineKey is how many bytes of namespace and name an entry holds in place.
const inlineKey = 56

func newEntry(rec *held, c ownContext) *resolvedEntry {
	sc := c.sc
	e := &resolvedEntry{
		//nolint:gosec // a few kinds; API names are at most 253 bytes (a longer one would only never match)
		kind: uint16(rec.key.kind), nsLen: uint16(len(rec.key.namespace)), nameLen: uint16(len(rec.key.name)),
		flags: sc.TraceFlags(), remote: sc.IsRemote(), link: c.link, traceID: sc.TraceID(), spanID: sc.SpanID(), uid: rec.uid,
	}
	if ts := sc.TraceState(); ts.Len() > 0 {
		e.state = &ts
	}
	if n := copy(e.inline[:], rec.key.namespace); len(rec.key.namespace)+len(rec.key.name) <= inlineKey {
		copy(e.inline[n:], rec.key.name)
	} else {
		e.long = rec.key.namespace + rec.key.name
	}
	return e
}

// is reports whether e is the object k.
func (e *resolvedEntry) is(k objKey) bool {
	if int(e.kind) != k.kind || int(e.nsLen) != len(k.namespace) || int(e.nameLen) != len(k.name) {
		return false
	}
	if e.long != "" {
		return e.long[:len(k.namespace)] == k.namespace && e.long[len(k.namespace):] == k.name
	}
	return string(e.inline[:len(k.namespace)]) == k.namespace && string(e.inline[len(k.namespace):len(k.namespace)+len(k.name)]) == k.name
}

// spanContext returns the context e holds.
func (e *resolvedEntry) spanContext() trace.SpanContext {
	cfg := trace.SpanContextConfig{TraceID: e.traceID, SpanID: e.spanID, TraceFlags: e.flags, Remote: e.remote}
	if e.state != nil {
		cfg.TraceState = *e.state
	}
	return trace.NewSpanContext(cfg)
}

// entryMeta is what the writer keeps about an entry.
type entryMeta struct {
	rec               *held
	nameHash, uidHash uint64
	named             bool // in byName: the object is its name's newest (rule 4)
}

func (t *resolvedTable) init() {
	t.seed = maphash.MakeSeed()
	t.names = namefilter.New()
	t.rebuild(0)
}

// refreshNames makes the name filter exactly the entries' names.
func (t *resolvedTable) refreshNames() {
	names := make([]string, 0, t.n.Load())
	for i := range t.next {
		if rec := t.meta[i].rec; rec != nil {
			names = append(names, rec.key.name)
		}
	}
	t.names.Replace(names)
	t.namesStale = 0
}

// nameHash hashes a key; the lookup computes it once.
func (t *resolvedTable) nameHash(k objKey) uint64 {
	kind := uint64(k.kind) //nolint:gosec // an index, never negative
	return maphash.String(t.seed, k.name) ^ bits.RotateLeft64((maphash.String(t.seed, k.namespace)^kind)*0x9e3779b97f4a7c15, 32)
}

func (t *resolvedTable) uidHash(uid string) uint64 { return maphash.String(t.seed, uid) }

// getName returns the named entry of k, whose hash is h, or nil.
func (t *resolvedTable) getName(h uint64, k objKey) *resolvedEntry {
	v := t.view.Load()
	if bit := h & (uint64(len(v.filter))*64 - 1); v.filter[bit>>6].Load()&(1<<(bit&63)) == 0 {
		return nil
	}
	hi := h >> 32
	for i := hi & v.mask; ; i = (i + 1) & v.mask {
		s := v.byName[i].Load()
		if s == 0 {
			return nil
		}
		if s>>32 == hi && s != tombstone {
			if e := v.entries[s&0xffffffff-1].Load(); e != nil && e.is(k) {
				return e
			}
		}
	}
}

// getUID returns the entry of uid, whose hash is h, or nil.
func (t *resolvedTable) getUID(h uint64, uid string) *resolvedEntry {
	v := t.view.Load()
	hi := h >> 32
	for i := hi & v.mask; ; i = (i + 1) & v.mask {
		s := v.byUID[i].Load()
		if s == 0 {
			return nil
		}
		if s>>32 == hi && s != tombstone {
			if e := v.entries[s&0xffffffff-1].Load(); e != nil && e.uid == uid {
				return e
			}
		}
	}
}

// set makes rec's entry hold c, in the name slots when named.
func (t *resolvedTable) set(rec *held, c ownContext, named bool) {
	if rec.ent >= 0 {
		v := t.view.Load()
		e := v.entries[rec.ent].Load()
		if !e.is(rec.key) { // renamed (not done by the API server, but possible here)
			t.del(rec)
			t.set(rec, c, named)
			return
		}
		if !e.spanContext().Equal(c.sc) || e.link != c.link {
			v.entries[rec.ent].Store(newEntry(rec, c))
		}
		m := &t.meta[rec.ent]
		switch {
		case named && !m.named:
			t.room()
			v = t.view.Load()
			m = &t.meta[rec.ent]
			t.nameUsed += placeName(v, m.nameHash, int(rec.ent))
		case !named && m.named:
			bury(v, v.byName, slot(m.nameHash, int(rec.ent)))
		}
		m.named = named
		return
	}
	t.room()
	v := t.view.Load()
	idx := t.next
	if n := len(t.free); n > 0 {
		idx, t.free = t.free[n-1], t.free[:n-1]
	} else {
		t.next++
	}
	m := entryMeta{rec: rec, nameHash: t.nameHash(rec.key), uidHash: t.uidHash(rec.uid), named: named}
	t.names.Add(rec.key.name) // before the entry can be found
	t.meta[idx] = m
	v.entries[idx].Store(newEntry(rec, c))
	rec.ent = idx
	t.uidUsed += place(v, v.byUID, slot(m.uidHash, int(idx)))
	if named {
		t.nameUsed += placeName(v, m.nameHash, int(idx))
	}
	t.n.Add(1)
}

// del removes rec's entry, if any.
func (t *resolvedTable) del(rec *held) {
	if rec.ent < 0 {
		return
	}
	v := t.view.Load()
	idx := rec.ent
	m := t.meta[idx]
	if m.named {
		bury(v, v.byName, slot(m.nameHash, int(idx)))
	}
	bury(v, v.byUID, slot(m.uidHash, int(idx)))
	v.entries[idx].Store(nil)
	t.meta[idx] = entryMeta{}
	t.free = append(t.free, idx)
	rec.ent = -1
	live := int(t.n.Add(-1))
	if len(v.byUID) > minSlots && 16*live < len(v.byUID) {
		t.rebuild(live) // shrink: a quarter of the slots used again
		return
	}
	if t.namesStale++; t.namesStale > max(live, minSlots) {
		t.refreshNames()
	}
}

// room makes sure one more entry, and one more slot in each array, fit in the view: at most
// half the slots hold objects, at most three quarters are not empty (a lookup always ends).
func (t *resolvedTable) room() {
	v := t.view.Load()
	live := int(t.n.Load()) + 1
	if 2*live > len(v.byUID) || 4*(t.uidUsed+1) > 3*len(v.byUID) || 4*(t.nameUsed+1) > 3*len(v.byName) {
		t.rebuild(live)
	}
}

// rebuild publishes a new view sized for live objects (a quarter of its slots), holding the
// current entries without tombstones. Lookups still reading the old view finish on it.
func (t *resolvedTable) rebuild(live int) {
	n := minSlots
	for n < 4*live {
		n *= 2
	}
	mask := uint64(n - 1) //nolint:gosec // n >= minSlots
	nv := &resolvedView{
		mask: mask, filter: make([]atomic.Uint64, n/8),
		byName: make([]atomic.Uint64, n), byUID: make([]atomic.Uint64, n),
		entries: make([]atomic.Pointer[resolvedEntry], n/2),
	}
	meta := make([]entryMeta, n/2)
	var idx int32
	t.nameUsed, t.uidUsed = 0, 0
	if old := t.view.Load(); old != nil {
		for i := range t.next {
			m := t.meta[i]
			if m.rec == nil {
				continue
			}
			nv.entries[idx].Store(old.entries[i].Load())
			meta[idx] = m
			m.rec.ent = idx
			t.uidUsed += place(nv, nv.byUID, slot(m.uidHash, int(idx)))
			if m.named {
				t.nameUsed += placeName(nv, m.nameHash, int(idx))
			}
			idx++
		}
	}
	t.meta, t.free, t.next = meta, nil, idx
	t.view.Store(nv)
	t.refreshNames()
}

// slot is the slot value of entry idx whose hash is h: its high half, and idx+1.
func slot(h uint64, idx int) uint64 {
	return h>>32<<32 | uint64(idx+1) //nolint:gosec // an index, never negative
}

// placeName puts entry idx, whose name hash is h, in the name slots and its bit in the filter
// (a bit is cleared only by a rebuild: a deleted name may leave one set), and returns what
// place returns.
func placeName(v *resolvedView, h uint64, idx int) int {
	bit := h & (uint64(len(v.filter))*64 - 1)
	v.filter[bit>>6].Or(1 << (bit & 63))
	return place(v, v.byName, slot(h, idx))
}

// place puts s in the first empty or deleted slot from its home, and returns 1 when that slot
// was empty (one more slot in use).
func place(v *resolvedView, slots []atomic.Uint64, s uint64) int {
	for i := (s >> 32) & v.mask; ; i = (i + 1) & v.mask {
		switch slots[i].Load() {
		case 0:
			slots[i].Store(s)
			return 1
		case tombstone:
			slots[i].Store(s)
			return 0
		}
	}
}

// bury marks slot value s, which is present, deleted.
func bury(v *resolvedView, slots []atomic.Uint64, s uint64) {
	i := (s >> 32) & v.mask
	for slots[i].Load() != s {
		i = (i + 1) & v.mask
	}
	slots[i].Store(tombstone)
}
