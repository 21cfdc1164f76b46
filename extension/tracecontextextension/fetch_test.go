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
// once while queued, not while its record is fresh or its last fetch failed within owner_ttl.
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

	e.queueFetch(owner("new"))
	e.queueFetch(owner("new"))
	assert.Len(t, e.fetches, 1, "queued once")

	e.store.put("fresh", record{key: rsKey("fresh"), sc: sc(1), fetched: time.Now()})
	e.queueFetch(owner("fresh"))
	assert.Len(t, e.fetches, 1, "fresh: not fetched again")

	e.store.put("stale", record{key: rsKey("stale"), sc: sc(2), fetched: time.Now().Add(-2 * time.Minute)})
	e.queueFetch(owner("stale"))
	assert.Len(t, e.fetches, 2, "older than owner_ttl: fetched again")

	e.negative["broken"] = time.Now()
	e.queueFetch(owner("broken"))
	assert.Len(t, e.fetches, 2, "failed within owner_ttl: not retried")
	e.negative["broken"] = time.Now().Add(-2 * time.Minute)
	e.queueFetch(owner("broken"))
	assert.Len(t, e.fetches, 3, "failed before owner_ttl: retried")

	for len(e.fetches) < fetchQueueSize {
		e.fetches <- owner("filler")
	}
	e.queueFetch(owner("overflow"))
	assert.False(t, e.queued["overflow"], "a full queue drops the request; the next Pod naming the owner asks again")
	require.NoError(t, e.Shutdown(t.Context()))
}
