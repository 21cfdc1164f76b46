// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/trace"
)

func sc(b byte) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{b, 1}, SpanID: trace.SpanID{b, 2}, Remote: true})
}

// testKinds are the kinds the store tests hold.
var testKinds = []groupKind{{"", "Pod"}, {"apps", "ReplicaSet"}, {"apps", "Deployment"}}

func pod(name string) nameKey { return nameKey{kind: "Pod", namespace: "shop", name: name} }

func TestStoreLookup(t *testing.T) {
	t.Parallel()
	counts := map[string]int64{}
	dropped := 0
	s := newStore(7, testKinds, func(kind string, d int64) { counts[kind] += d }, func() { dropped++ })
	deploy := nameKey{group: "apps", kind: "Deployment", namespace: "shop", name: "web"}
	rs := nameKey{group: "apps", kind: "ReplicaSet", namespace: "shop", name: "web-1"}
	s.put("d1", record{key: deploy, sc: sc(1)})
	s.put("rs1", record{key: rs, owner: "d1"})
	s.put("p1", record{key: pod("web-1-a"), owner: "rs1"})
	s.put("p2", record{key: pod("web-1-b"), sc: sc(2), owner: "rs1"})
	s.put("p3", record{key: pod("naked")}) // neither context nor owner: not held
	s.put("p4", record{key: pod("orphan"), owner: "gone"})
	s.put("c1", record{key: pod("cycle-a"), owner: "c2"})
	s.put("c2", record{key: pod("cycle-b"), owner: "c1"})
	s.put("p5", record{key: pod("late"), sc: sc(5)}) // the eighth: over max_objects

	tests := []struct {
		name string
		uid  string
		key  nameKey
		want trace.SpanContext
	}{
		{"own context by name", "", pod("web-1-b"), sc(2)},
		{"own context by uid", "p2", nameKey{}, sc(2)},
		{"pod without context: its Deployment's, through the ReplicaSet", "", pod("web-1-a"), sc(1)},
		{"ReplicaSet by name", "", rs, sc(1)},
		{"Deployment itself", "d1", deploy, sc(1)},
		{"uid wins over the name", "p1", pod("web-1-b"), sc(1)},
		{"unknown uid", "nope", pod("web-1-b"), trace.SpanContext{}},
		{"not held", "", pod("naked"), trace.SpanContext{}},
		{"owner not held", "", pod("orphan"), trace.SpanContext{}},
		{"wrong group", "", nameKey{kind: "Deployment", namespace: "shop", name: "web"}, trace.SpanContext{}},
		{"owner cycle ends", "", pod("cycle-a"), trace.SpanContext{}},
		{"dropped when full", "", pod("late"), trace.SpanContext{}},
	}
	for _, tt := range tests {
		got, ok := s.lookup(tt.uid, tt.key)
		assert.Equal(t, tt.want.IsValid(), ok, tt.name)
		assert.True(t, got.Equal(tt.want), "%s: %v", tt.name, got)
	}
	assert.Equal(t, 7, s.len())
	assert.Equal(t, 1, dropped)
	assert.Equal(t, map[string]int64{"Deployment": 1, "ReplicaSet": 1, "Pod": 5}, counts)

	// Context removed: the record stays as a link; removed and ownerless: forgotten.
	s.put("p2", record{key: pod("web-1-b"), owner: "rs1"})
	got, _ := s.lookup("", pod("web-1-b"))
	assert.True(t, got.Equal(sc(1)))
	s.put("p4", record{key: pod("orphan")})
	s.remove("c1")
	assert.Equal(t, 5, s.len())
	assert.Equal(t, int64(3), counts["Pod"])

	// Recreated under the same name: the name points to the newest uid.
	s.put("d2", record{key: deploy, sc: sc(3)})
	got, _ = s.lookup("", deploy)
	assert.True(t, got.Equal(sc(3)))
	s.remove("d1")
	got, _ = s.lookup("", deploy)
	assert.True(t, got.Equal(sc(3)), "removing the old uid keeps the name of the new")
}

func TestStoreDropUnreferenced(t *testing.T) {
	t.Parallel()
	counts := map[string]int64{}
	s := newStore(100, testKinds, func(kind string, d int64) { counts[kind] += d }, func() {})
	fetched := time.Now()
	deploy := nameKey{group: "apps", kind: "Deployment", namespace: "shop", name: "web"}
	s.put("d1", record{key: deploy, sc: sc(1), fetched: fetched})
	s.put("rs1", record{key: nameKey{group: "apps", kind: "ReplicaSet", namespace: "shop", name: "web-1"}, owner: "d1", fetched: fetched})
	s.put("rs0", record{key: nameKey{group: "apps", kind: "ReplicaSet", namespace: "shop", name: "web-0"}, owner: "d1", fetched: fetched})
	s.put("p1", record{key: pod("web-1-a"), owner: "rs1"})
	s.put("p9", record{key: pod("watched"), sc: sc(9)}) // watched, never dropped by the sweep

	assert.Equal(t, 1, s.dropUnreferenced(), "rs0: no Pod names it")
	assert.Equal(t, 0, s.dropUnreferenced())
	got, ok := s.lookup("", pod("web-1-a"))
	assert.True(t, ok)
	assert.True(t, got.Equal(sc(1)))

	s.remove("p1") // the last Pod of rs1 leaves the node
	assert.Equal(t, 1, s.dropUnreferenced(), "rs1")
	assert.Equal(t, 1, s.dropUnreferenced(), "then d1")
	assert.Equal(t, 1, s.len())
	assert.Equal(t, map[string]int64{"Deployment": 0, "ReplicaSet": 0, "Pod": 1}, counts)
	_, ok = s.lookup("", deploy)
	assert.False(t, ok)
}

// TestStoreContextCount checks the count behind the lookup's fast negative answer (design.md
// rule 4) through every way a record comes and goes: while it is zero a lookup answers "no
// context" without the lock; a wrong count would hide contexts or keep the slow path.
func TestStoreContextCount(t *testing.T) {
	t.Parallel()
	s := newStore(10, testKinds, func(string, int64) {}, func() {})
	rs := nameKey{group: "apps", kind: "ReplicaSet", namespace: "shop", name: "web-1"}
	steps := []struct {
		name string
		do   func()
		want int64
	}{
		{"links only", func() {
			s.put("p1", record{key: pod("a"), owner: "rs1"})
			s.put("rs1", record{key: rs, fetched: time.Now()})
		}, 0},
		{"owner gets a context: it and its Pod resolve", func() { s.put("rs1", record{key: rs, sc: sc(1), fetched: time.Now()}) }, 2},
		{"context replaced", func() { s.put("rs1", record{key: rs, sc: sc(2), fetched: time.Now()}) }, 2},
		{"pod gets its own", func() { s.put("p1", record{key: pod("a"), sc: sc(3), owner: "rs1"}) }, 2},
		{"pod's context removed: its owner's again", func() { s.put("p1", record{key: pod("a"), owner: "rs1"}) }, 2},
		{"pod deleted, then its owner swept", func() {
			s.remove("p1")
			s.dropUnreferenced()
		}, 0},
		{"context without owner, then deleted", func() {
			s.put("p2", record{key: pod("b"), sc: sc(4)})
			s.remove("p2")
		}, 0},
	}
	for _, st := range steps {
		st.do()
		assert.Equal(t, st.want, s.table.n.Load(), st.name)
	}
	_, ok := s.lookup("", pod("a"))
	assert.False(t, ok)
}

// TestStoreRelation: a context read from tracing.k8s.io/traceparent stays a link through the
// owner walk and through a change of relation alone (design.md rule 10).
func TestStoreRelation(t *testing.T) {
	t.Parallel()
	s := newStore(10, testKinds, func(string, int64) {}, func() {})
	deploy := nameKey{group: "apps", kind: "Deployment", namespace: "shop", name: "web"}
	rs := nameKey{group: "apps", kind: "ReplicaSet", namespace: "shop", name: "web-1"}
	type want struct {
		sc   trace.SpanContext
		link bool
	}
	tests := []struct {
		name   string
		change func()
		pod    want // what the Pod (no context of its own) resolves to
		rs     want
	}{
		{"a linked Deployment: its ReplicaSet and Pod inherit the link", func() {
			s.put("d1", record{key: deploy, sc: sc(1), link: true})
			s.put("rs1", record{key: rs, owner: "d1"})
			s.put("p1", record{key: pod("web-1-a"), owner: "rs1"})
		}, want{sc(1), true}, want{sc(1), true}},
		{"the same context becomes a parent (the other key): relation alone changes", func() {
			s.put("d1", record{key: deploy, sc: sc(1)})
		}, want{sc(1), false}, want{sc(1), false}},
		{"the ReplicaSet carries its own link: the nearest decides", func() {
			s.put("rs1", record{key: rs, sc: sc(2), link: true, owner: "d1"})
		}, want{sc(2), true}, want{sc(2), true}},
		{"and loses it: the Deployment's parent again", func() {
			s.put("rs1", record{key: rs, owner: "d1"})
		}, want{sc(1), false}, want{sc(1), false}},
	}
	for _, tt := range tests {
		tt.change()
		for _, c := range []struct {
			uid  string
			want want
		}{{"p1", tt.pod}, {"rs1", tt.rs}} {
			got, ok := s.lookupRelation(c.uid, nameKey{})
			assert.True(t, ok, "%s: %s", tt.name, c.uid)
			assert.Equal(t, c.want.sc, got.sc, "%s: %s", tt.name, c.uid)
			assert.Equal(t, c.want.link, got.link, "%s: %s link", tt.name, c.uid)
		}
	}
}
