// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
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
	e.negative.put("broken", read)
	e.negative.put("no-context", read)

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
	e.negative.put("broken", now.Add(-2*time.Minute))
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

// TestOwnerReadByPodMetadata: an owner pod_metadata read for a Pod is stored as if fetched
// then, so neither the Pod nor a later one of the same owner makes this extension GET it
// (design.md rule 7: one GET per owner for both); its own owner is still fetched.
func TestOwnerReadByPodMetadata(t *testing.T) {
	t.Parallel()
	cfg := createDefaultConfig().(*Config)
	cfg.NodeName, cfg.OwnerTTL = "node-1", time.Minute
	e, err := newExtension(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	now := time.Now()
	created := now.Add(-time.Hour)
	deployment := podmeta.Owner{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d1"}
	replicaSet := func(read time.Time, annotations map[string]string) podmeta.Owner {
		return podmeta.Owner{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs1", Read: read, Created: created, Annotations: annotations}
	}
	withContext := map[string]string{objecttrace.ContextAnnotation: objecttrace.FormatTraceparent(sc(7))}
	pod := func(name string, owners ...podmeta.Owner) *podmeta.Pod {
		return &podmeta.Pod{UID: "uid-" + name, Namespace: "shop", Name: name, Created: created.Add(time.Minute), Owners: owners}
	}
	queued := func() []string {
		var uids []string
		for len(e.fetches) > 0 {
			uids = append(uids, (<-e.fetches).uid)
		}
		clear(e.queued)
		return uids
	}
	res := e.kinds["/Pod"]
	apply := func(p *podmeta.Pod) {
		e.observeRead(p)
		e.observe(res, podObject(p), time.Time{})
	}

	apply(pod("a", replicaSet(now, withContext), deployment))
	assert.Equal(t, []string{"d1"}, queued(), "the ReplicaSet read by pod_metadata is not fetched again; its Deployment is")
	got, ok := e.store.lookup("uid-a", nameKey{})
	assert.True(t, ok)
	assert.Equal(t, sc(7).TraceID(), got.TraceID(), "the Pod resolves to the context of the ReplicaSet read by pod_metadata")
	at, _ := e.store.fetchedAt("rs1")
	assert.True(t, at.Equal(now), "held as fetched when pod_metadata read it")

	e.store.put("rs1", record{key: nameKey{group: "apps", kind: "ReplicaSet", namespace: "shop", name: "web-1"}, sc: sc(8), owner: "d1", fetched: now.Add(time.Second)})
	apply(pod("b", replicaSet(now, withContext), deployment))
	got, _ = e.store.lookup("uid-b", nameKey{})
	assert.Equal(t, sc(8).TraceID(), got.TraceID(), "an older read does not replace this extension's newer one")
	assert.Empty(t, queued())

	bare := podmeta.Owner{APIVersion: "batch/v1", Kind: "Job", Name: "once", UID: "j1", Read: now, Created: created}
	apply(pod("c", bare))
	assert.Empty(t, queued(), "an owner read without a context to keep is remembered as negative, not fetched")
	_, remembered := e.negative.get("j1")
	assert.True(t, remembered)

	apply(pod("d", podmeta.Owner{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-2", UID: "rs2"}, deployment))
	assert.Equal(t, []string{"rs2"}, queued(), "an owner pod_metadata did not read is fetched")
	require.NoError(t, e.Shutdown(t.Context()))
}

// TestPodMetadataKeepsTheTraceKeys: the owner annotations pod_metadata keeps for this extension
// include every key pkg/objecttrace reads.
func TestPodMetadataKeepsTheTraceKeys(t *testing.T) {
	t.Parallel()
	for _, k := range []string{objecttrace.ContextAnnotation, objecttrace.TraceparentAnnotation, objecttrace.TracestateAnnotation} {
		assert.True(t, podmeta.TraceAnnotation(k), k)
	}
}
