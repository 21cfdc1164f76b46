// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
)

// TestQueueFetch checks when node scope asks the API server for an owner (design.md rule 7):
// once while queued, not while its record is fresh or its last fetch failed within owner_ttl,
// unless the dependent naming it was created after that read (re-read).
func TestQueueFetch(t *testing.T) {
	t.Parallel()
	cfg := createDefaultConfig().(*Config)
	cfg.NodeName, cfg.OwnerTTL = "node-1", time.Minute
	e, err := newExtension(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	rsRes := e.kinds["apps/ReplicaSet"]
	owner := func(uid string) ownerRef { return ownerRef{uid: uid, namespace: "shop", name: uid, res: rsRes} }
	rsKey := func(uid string) nameKey {
		return nameKey{group: "apps", kind: "ReplicaSet", namespace: "shop", name: uid}
	}
	now := time.Now()
	read := now.Add(-10 * time.Second) // when the held owners were read
	e.store.put("fresh", record{key: rsKey("fresh"), sc: sc(1), fetched: read})
	e.store.put("stale", record{key: rsKey("stale"), sc: sc(2), fetched: now.Add(-2 * time.Minute)})
	e.store.put("renewed", record{key: rsKey("renewed"), sc: sc(3), fetched: read})
	e.store.put("same-second", record{key: rsKey("same-second"), sc: sc(4), fetched: read})
	e.negative["broken"] = read
	e.negative["no-context"] = read

	tests := []struct {
		name    string
		uid     string
		created time.Time // the dependent's creation; zero: unknown
		queued  bool      // reported queued
		fetches int       // queue length after
	}{
		{"unknown owner: queued", "new", time.Time{}, true, 1},
		{"queued once", "new", time.Time{}, true, 1},
		{"fresh: not fetched again", "fresh", time.Time{}, false, 1},
		{"fresh, dependent created before the read: not fetched again", "fresh", read.Add(-time.Minute), false, 1},
		{"older than owner_ttl: fetched again", "stale", time.Time{}, true, 2},
		{"failed within owner_ttl: not retried", "broken", read.Add(-time.Second * 5), false, 2},
		{"fresh, dependent created after the read: read again", "renewed", read.Add(5 * time.Second), true, 3},
		{"created within the read's second: not read again (one-second precision)", "same-second", read.Truncate(time.Second), false, 3},
		{"no context, dependent created after the read: read again", "no-context", read.Add(time.Second), true, 4},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.queued, e.queueFetch(owner(tt.uid), tt.created), tt.name)
		assert.Len(t, e.fetches, tt.fetches, tt.name)
	}
	e.negative["broken"] = now.Add(-2 * time.Minute)
	assert.True(t, e.queueFetch(owner("broken"), time.Time{}), "failed before owner_ttl: retried")

	for len(e.fetches) < fetchQueueSize {
		e.fetches <- owner("filler")
	}
	assert.False(t, e.queueFetch(owner("overflow"), time.Time{}))
	assert.False(t, e.queued["overflow"], "a full queue drops the request; the next Pod naming the owner asks again")
	require.NoError(t, e.Shutdown(t.Context()))
}

// TestWaitForReRead: a dependent whose owner is being read again resolves to no context, not to
// the owner's older one, until the read ends (design.md rule 7, re-read).
func TestWaitForReRead(t *testing.T) {
	t.Parallel()
	s := newStore(10, testKinds, func(string, int64) {}, func() {})
	deploy := nameKey{group: "apps", kind: "Deployment", namespace: "shop", name: "web"}
	rs := nameKey{group: "apps", kind: "ReplicaSet", namespace: "shop", name: "web-2"}
	s.put("d1", record{key: deploy, sc: sc(1), fetched: time.Now()})
	s.put("rs2", record{key: rs, owner: "d1", fetched: time.Now()})
	s.put("p1", record{key: pod("web-2-a"), owner: "rs2", wait: true})
	_, ok := s.lookup("p1", nameKey{})
	assert.False(t, ok, "waiting: no context rather than the previous rollout's")
	got, ok := s.lookup("rs2", nameKey{})
	assert.True(t, ok)
	assert.Equal(t, sc(1), got, "the owner itself still answers")
	s.put("rs2", record{key: rs, sc: sc(2), owner: "d1", fetched: time.Now()}) // the read finds a new context
	s.release("rs2")
	got, ok = s.lookup("p1", nameKey{})
	assert.True(t, ok)
	assert.Equal(t, sc(2), got, "released: the context read again")
}
