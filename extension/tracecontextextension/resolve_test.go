// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
)

// TestResolveOnOwnerChange checks that a dependent's answer follows its owners (design.md rule
// 4): contexts added, replaced and removed above it, owners arriving after it, deleted, and the
// walk's bound. Each step is applied in order to one store; want lists what the lookups by name
// answer after it (0: no context).
func TestResolveOnOwnerChange(t *testing.T) {
	t.Parallel()
	s := newStore(100, testKinds, func(string, int64) {}, func() {})
	deploy := nameKey{group: "apps", kind: "Deployment", namespace: "shop", name: "web"}
	rs := nameKey{group: "apps", kind: "ReplicaSet", namespace: "shop", name: "web-1"}
	rs2 := nameKey{group: "apps", kind: "ReplicaSet", namespace: "shop", name: "web-2"}
	lookups := []nameKey{pod("a"), pod("b"), rs, deploy}
	steps := []struct {
		name string
		do   func()
		want []byte // by lookups
	}{
		{"Pods before their ReplicaSet", func() {
			s.put("pa", record{key: pod("a"), owner: "rs1"})
			s.put("pb", record{key: pod("b"), sc: sc(9), owner: "rs1"})
		}, []byte{0, 9, 0, 0}},
		{"the ReplicaSet arrives with a context", func() { s.put("rs1", record{key: rs, sc: sc(1), owner: "d1"}) }, []byte{1, 9, 1, 0}},
		{"its context is replaced", func() { s.put("rs1", record{key: rs, sc: sc(2), owner: "d1"}) }, []byte{2, 9, 2, 0}},
		{"its context is removed: nothing above it yet", func() { s.put("rs1", record{key: rs, owner: "d1"}) }, []byte{0, 9, 0, 0}},
		{"the Deployment arrives with one: two hops", func() { s.put("d1", record{key: deploy, sc: sc(3)}) }, []byte{3, 9, 3, 3}},
		{"the ReplicaSet gets its own again: the nearest wins", func() { s.put("rs1", record{key: rs, sc: sc(4), owner: "d1"}) }, []byte{4, 9, 4, 3}},
		{"and loses it", func() { s.put("rs1", record{key: rs, owner: "d1"}) }, []byte{3, 9, 3, 3}},
		{"the Deployment's context is replaced", func() { s.put("d1", record{key: deploy, sc: sc(5)}) }, []byte{5, 9, 5, 5}},
		{"the Pod with its own loses it", func() { s.put("pb", record{key: pod("b"), owner: "rs1"}) }, []byte{5, 5, 5, 5}},
		{"a Pod is adopted by another ReplicaSet", func() {
			s.put("rs2", record{key: rs2, sc: sc(6)})
			s.put("pa", record{key: pod("a"), owner: "rs2"})
		}, []byte{6, 5, 5, 5}},
		{"the Deployment is deleted", func() { s.remove("d1") }, []byte{6, 0, 0, 0}},
		{"the ReplicaSet is deleted: its Pod is not held (owner only)", func() { s.remove("rs1") }, []byte{6, 0, 0, 0}},
		{"the ReplicaSet comes back (relist) with a context", func() { s.put("rs1", record{key: rs, sc: sc(7)}) }, []byte{6, 7, 7, 0}},
		{"the Pod is orphaned (no controller)", func() { s.put("pa", record{key: pod("a")}) }, []byte{0, 7, 7, 0}},
	}
	for _, st := range steps {
		st.do()
		for i, k := range lookups {
			got, ok := s.lookup("", k)
			if st.want[i] == 0 {
				assert.False(t, ok, "%s: %s", st.name, k.name)
				continue
			}
			assert.True(t, ok && got.Equal(sc(st.want[i])), "%s: %s: got %v", st.name, k.name, got.TraceID())
		}
	}
}

// TestResolveBounds checks the walk's bound (an object and 7 owners above it), cycles, and the
// name of an object deleted and recreated.
func TestResolveBounds(t *testing.T) {
	t.Parallel()
	s := newStore(100, testKinds, func(string, int64) {}, func() {})
	// p0 <- p1 <- ... <- p9: p0 carries the context, added last, so every dependent is resolved
	// again from the top.
	for i := 1; i <= 9; i++ {
		s.put(fmt.Sprint("p", i), record{key: pod(fmt.Sprint("chain-", i)), owner: fmt.Sprint("p", i-1)})
	}
	s.put("p0", record{key: pod("chain-0"), sc: sc(1)})
	for i := 0; i <= 9; i++ {
		_, ok := s.lookup(fmt.Sprint("p", i), nameKey{})
		assert.Equal(t, i <= 7, ok, "chain-%d, %d hops from the context", i, i)
	}
	s.put("p0", record{key: pod("chain-0"), sc: sc(2), owner: "p9"}) // a cycle through the context
	got, ok := s.lookup("", pod("chain-7"))
	assert.True(t, ok && got.Equal(sc(2)))
	_, ok = s.lookup("", pod("chain-9"))
	assert.False(t, ok, "9 hops")
	s.put("p0", record{key: pod("chain-0"), owner: "p9"}) // a cycle without a context
	for i := 0; i <= 9; i++ {
		_, ok := s.lookup("", pod(fmt.Sprint("chain-", i)))
		assert.False(t, ok, "chain-%d", i)
	}

	// Recreated under the same name: the name is the newest uid's, also once the old one goes.
	deploy := nameKey{group: "apps", kind: "Deployment", namespace: "shop", name: "web"}
	s.put("old", record{key: deploy, sc: sc(3)})
	s.put("new", record{key: deploy, owner: "none"})
	_, ok = s.lookup("", deploy)
	assert.False(t, ok, "the new one has no context")
	got, ok = s.lookup("old", nameKey{})
	assert.True(t, ok && got.Equal(sc(3)), "the old one by uid")
	s.put("old", record{key: deploy, sc: sc(4)}) // an update of the old one does not take the name back
	_, ok = s.lookup("", deploy)
	assert.False(t, ok)
	s.put("new", record{key: deploy, sc: sc(5)})
	got, ok = s.lookup("", deploy)
	assert.True(t, ok && got.Equal(sc(5)))
	s.remove("new")
	_, ok = s.lookup("", deploy)
	assert.False(t, ok, "the name went with the newest uid")
}

// refModel is the straightforward reading of design.md rules 2-5 the store is checked against:
// maps, and a walk at lookup time.
type refModel struct {
	max    int
	byUID  map[string]record
	byName map[nameKey]string
	drops  int
}

func (m *refModel) put(uid string, r record) {
	if !r.sc.IsValid() && r.owner == "" {
		m.remove(uid)
		return
	}
	old, had := m.byUID[uid]
	if !had && len(m.byUID) >= m.max {
		m.drops++
		return
	}
	if !had || old.key != r.key {
		if had && m.byName[old.key] == uid {
			delete(m.byName, old.key)
		}
		m.byName[r.key] = uid
	}
	m.byUID[uid] = r
}

func (m *refModel) remove(uid string) {
	if r, ok := m.byUID[uid]; ok {
		delete(m.byUID, uid)
		if m.byName[r.key] == uid {
			delete(m.byName, r.key)
		}
	}
}

func (m *refModel) dropUnreferenced() int {
	referenced := map[string]bool{}
	for _, r := range m.byUID {
		referenced[r.owner] = true
	}
	var gone []string
	for uid, r := range m.byUID {
		if !r.fetched.IsZero() && !referenced[uid] {
			gone = append(gone, uid)
		}
	}
	for _, uid := range gone {
		m.remove(uid)
	}
	return len(gone)
}

func (m *refModel) lookup(uid string, key nameKey) (trace.SpanContext, bool) {
	if uid == "" {
		uid = m.byName[key]
	}
	for range maxOwnerHops {
		r, ok := m.byUID[uid]
		if !ok {
			return trace.SpanContext{}, false
		}
		if r.sc.IsValid() {
			return r.sc, true
		}
		uid = r.owner
	}
	return trace.SpanContext{}, false
}

// graphOps applies ops, read from data (three bytes each), to a store and to the reference
// model over a small universe of uids, names, contexts and owners (so that owners, recreated
// names, cycles and a full store occur often), and checks after each that every lookup by uid
// and by name answers alike, and that the counts agree.
func graphOps(t *testing.T, data []byte) {
	const uids = 12
	counts := map[string]int64{}
	dropped := 0
	s := newStore(10, testKinds, func(kind string, d int64) { counts[kind] += d }, func() { dropped++ })
	m := &refModel{max: 10, byUID: map[string]record{}, byName: map[nameKey]string{}}
	var names []nameKey
	for _, gk := range testKinds {
		for _, ns := range []string{"a", "bb"} {
			for _, n := range []string{"x", "y", "a-much-longer-name-than-fits-in-an-entry-of-the-table-0123456789"} {
				names = append(names, nameKey{group: gk.group, kind: gk.kind, namespace: ns, name: n})
			}
		}
	}
	uidOf := func(b byte) string { return fmt.Sprint("u", int(b)%uids) }
	for len(data) >= 3 {
		op, a, b := data[0], data[1], data[2]
		data = data[3:]
		uid := uidOf(a)
		switch op % 8 {
		case 0, 1, 2, 3, 4:
			r := record{key: names[int(b)%len(names)]}
			if c := (b >> 4) % 4; c > 0 {
				r.sc = sc(c)
			}
			if o := a >> 4; o < uids {
				r.owner = uidOf(o)
			}
			if op&8 != 0 {
				r.fetched = time.Unix(1, 0)
			}
			s.put(uid, r)
			m.put(uid, r)
		case 5, 6:
			s.remove(uid)
			m.remove(uid)
		case 7:
			require.Equal(t, m.dropUnreferenced(), s.dropUnreferenced(), "dropUnreferenced")
		}
		resolved := int64(0)
		for i := range uids {
			u := fmt.Sprint("u", i)
			want, wantOK := m.lookup(u, nameKey{})
			got, ok := s.lookup(u, nameKey{})
			require.Equal(t, wantOK, ok, "uid %s", u)
			require.True(t, got.Equal(want), "uid %s", u)
			if ok {
				resolved++
				k := m.byUID[u].key
				require.True(t, s.table.names.MayContain(k.kind, k.name), "name filter: uid %s (%v)", u, k)
			}
		}
		require.Equal(t, resolved, s.table.n.Load(), "objects in the table")
		for _, k := range names {
			want, wantOK := m.lookup("", k)
			got, ok := s.lookup("", k)
			require.Equal(t, wantOK, ok, "name %v", k)
			require.True(t, got.Equal(want), "name %v", k)
			if wantOK {
				require.True(t, s.table.names.MayContain(k.kind, k.name), "name filter: %v", k)
			}
		}
		want := map[string]int64{}
		for _, r := range m.byUID {
			want[r.key.kind]++
		}
		for kind, n := range counts {
			require.Equal(t, want[kind], n, "count of %s", kind)
		}
		require.Equal(t, len(m.byUID), s.len())
		require.Equal(t, m.drops, dropped)
	}
}

// TestResolvedAgainstReference runs graphOps over random operation sequences.
func TestResolvedAgainstReference(t *testing.T) {
	t.Parallel()
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 13))
		data := make([]byte, 3*300)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) { graphOps(t, data) })
	}
}

// FuzzResolved is graphOps on any operation sequence.
func FuzzResolved(f *testing.F) {
	f.Add([]byte{0, 0x10, 0x11, 0, 0x01, 0x22, 5, 0, 0, 7, 0, 0})
	f.Add([]byte{8, 0x10, 0x10, 8, 0x21, 0x13, 0, 0xf2, 0x04, 7, 0, 0, 7, 0, 0})
	f.Fuzz(graphOps)
}

// TestLookupsDuringWrites reads objects whose context never changes while other objects are
// written, replaced and deleted (with the table growing, shrinking and rebuilt): the lookups,
// which take no lock, must always find the stable ones (-race checks the rest).
func TestLookupsDuringWrites(t *testing.T) {
	t.Parallel()
	s := newStore(100_000, testKinds, func(string, int64) {}, func() {})
	const stable = 50
	for i := range stable {
		s.put(fmt.Sprint("stable-", i), record{key: pod(fmt.Sprint("stable-", i)), sc: sc(byte(i))})
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 1)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load() || n < 1000; n++ {
				i := n % stable
				got, ok := s.lookup("", pod(fmt.Sprint("stable-", i)))
				if !ok || !got.Equal(sc(byte(i))) {
					select {
					case errs <- fmt.Sprintf("stable-%d: %v %v", i, ok, got.TraceID()):
					default:
					}
					return
				}
				if _, ok := s.lookup(fmt.Sprint("stable-", i), nameKey{}); !ok {
					select {
					case errs <- fmt.Sprintf("stable-%d by uid", i):
					default:
					}
					return
				}
			}
		}()
	}
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		for i := range 500 {
			uid := fmt.Sprint("churn-", i)
			if r.IntN(3) == 0 {
				s.remove(uid)
				continue
			}
			s.put(uid, record{key: pod(fmt.Sprint("churn-", i)), sc: sc(byte(round))})
		}
		for i := range 500 {
			s.remove(fmt.Sprint("churn-", i))
		}
	}
	stop.Store(true)
	wg.Wait()
	select {
	case e := <-errs:
		t.Fatal(e)
	default:
	}
}
