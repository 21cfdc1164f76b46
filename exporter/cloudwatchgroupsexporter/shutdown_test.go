// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// TestShutdownDuringOutageKeepsQueue stops the DaemonSet's exporter (shipped settings,
// persistent queue) while CloudWatch is down and a request is retrying. Shutdown must not wait
// for that request's timeout (it stops retrying at once, so the pod's termination grace period
// is enough), and must leave the undelivered request in the queue: a restarted exporter on the
// same storage delivers every event, once.
func TestShutdownDuringOutageKeepsQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("outage and restart")
	}
	awsEnv(t)
	b := startLocal(t, localConfig{})
	cfg := shippedExporterConfig(t, map[string]string{"AWS_REGION": "us-east-1", "CLUSTER_NAME": "shipped", "K8S_NODE_NAME": "node-1"})
	var down atomic.Bool
	var refused atomic.Int64
	cfg.Endpoint = outageProxy(t, b.endpoint, &down, &refused)
	dir := t.TempDir()
	id := component.NewIDWithName(metadata.Type, "shutdown")
	start := func() (exporter.Logs, func()) {
		fsID, ext := startFileStorage(t, dir)
		c := *cfg
		c.QueueConfig.Get().StorageID = &fsID
		exp := newTestExporter(t, &c, id, storageHost{exts: map[component.ID]component.Component{fsID: ext}})
		return exp, func() {
			require.NoError(t, exp.Shutdown(context.Background()))
			require.NoError(t, ext.Shutdown(context.Background()))
		}
	}

	down.Store(true)
	exp, stop := start()
	const perSource = 100
	for i := range 3 {
		ld := makeLogs(testSources, perSource, time.Now(), "node-1")
		setBodies(ld, func(body string) string { return fmt.Sprintf("call %d %s", i, body) })
		require.NoError(t, exp.ConsumeLogs(context.Background(), ld))
	}
	// A request is being retried against the outage.
	require.Eventually(t, func() bool { return refused.Load() >= 3 }, 30*time.Second, 10*time.Millisecond)
	began := time.Now()
	stop()
	took := time.Since(began)
	t.Logf("shutdown took %s (request timeout %s)", took, cfg.TimeoutConfig.Timeout)
	assert.Less(t, took, cfg.TimeoutConfig.Timeout/3, "shutdown waited for the retrying request")

	down.Store(false)
	_, stop = start()
	want := 3 * perSource * len(testSources)
	require.Eventually(t, func() bool { return len(b.storedEvents(t)) >= want }, time.Minute, 50*time.Millisecond,
		"the undelivered requests stay queued across the restart")
	stop()
	seen := map[string]int{}
	for _, ev := range b.storedEvents(t) {
		seen[bodyOf(t, ev.Message)]++
	}
	assert.Len(t, seen, want, "every event")
	for body, n := range seen {
		assert.Equal(t, 1, n, "stored %d times: %s", n, body)
	}
}
