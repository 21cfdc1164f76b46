// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// storageHost is a component.Host offering one storage extension.
type storageHost struct {
	exts map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.exts }

func startFileStorage(t testing.TB, dir string) (component.ID, extension.Extension) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	set := extensiontest.NewNopSettings(f.Type())
	set.ID = component.NewID(f.Type())
	ext, err := f.Create(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), storageHost{}))
	return set.ID, ext
}

// TestFaultsAndRestart sends through a server that throttles 30% and fails 5% of all calls
// with 503, and restarts the exporter once with a persistent file_storage queue. Every event
// must be stored. Shutdown stops retrying at once and leaves every request it did not finish
// in the queue, whole, so events of batches already delivered from such a request are stored
// again after the restart: at most the queue items dispatched at the stop (design.md, 6).
func TestFaultsAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("long fault test")
	}
	awsEnv(t)
	b := startLocal(t, localConfig{
		Seed: 7,
		Faults: localFaults{
			ThrottleRate: 0.30, ServerErrorRate: 0.05,
			Latency: 2 * time.Millisecond, LatencyJitter: 3 * time.Millisecond,
		},
	})
	storageDir := t.TempDir()
	exporterID := component.NewIDWithName(metadata.Type, "fault")

	cfg := testConfig(b.endpoint)
	q := cfg.QueueConfig.Get()
	q.NumConsumers = 2
	q.Batch.Get().MinSize = 256 << 10
	q.Batch.Get().MaxSize = 1 << 20

	const calls, perSource, host = 40, 150, "node-f"
	sources := testSources
	end := time.Now()
	start := func() (func(), func(int)) {
		fsID, ext := startFileStorage(t, storageDir)
		c := *cfg
		c.QueueConfig.Get().StorageID = &fsID
		exp := newTestExporter(t, &c, exporterID, storageHost{exts: map[component.ID]component.Component{fsID: ext}})
		stop := func() {
			require.NoError(t, exp.Shutdown(context.Background()))
			require.NoError(t, ext.Shutdown(context.Background()))
		}
		push := func(i int) {
			ld := makeLogs(sources, perSource, end.Add(-time.Duration(calls-i)*perSource*time.Second), host)
			// Make every body unique across calls.
			setBodies(ld, func(body string) string { return fmt.Sprintf("call %d %s", i, body) })
			require.NoError(t, exp.ConsumeLogs(context.Background(), ld))
		}
		return stop, push
	}

	stop, push := start()
	for i := range calls / 2 {
		push(i)
	}
	require.Eventually(t, func() bool { return b.local.Stats().EventsAccepted > 0 }, 30*time.Second, 10*time.Millisecond)
	stop()
	afterFirst := b.local.Stats().EventsAccepted
	t.Logf("events stored before the restart: %d of %d queued", afterFirst, calls/2*perSource*len(sources))

	stop, push = start()
	for i := calls / 2; i < calls; i++ {
		push(i)
	}
	total := calls * perSource * len(sources)
	distinct := func() map[string]int {
		seen := map[string]int{}
		for _, ev := range b.storedEvents(t) {
			seen[bodyOf(t, ev.Message)]++
		}
		return seen
	}
	require.Eventually(t, func() bool { return len(distinct()) >= total }, 3*time.Minute, 100*time.Millisecond)
	stop()

	st := b.local.Stats()
	t.Logf("throttles %d, injected 5xx %d, requests %v", st.Throttles, st.InjectedServerErrors, st.Requests)
	assert.Positive(t, st.InjectedThrottles)
	assert.Positive(t, st.InjectedServerErrors)

	seen := distinct()
	missing, dupEvents, dupBytes := 0, 0, 0
	for i := range calls {
		for _, s := range sources {
			for k := range perSource {
				body := fmt.Sprintf("call %d %s#%d", i, s.filePath(), k)
				switch n := seen[body]; {
				case n == 0:
					missing++
				case n > 1:
					dupEvents += n - 1
				}
			}
		}
	}
	for _, ev := range b.storedEvents(t) {
		if seen[bodyOf(t, ev.Message)] > 1 {
			dupBytes += len(ev.Message) + 26
		}
	}
	assert.Zero(t, missing, "events lost")
	assert.Len(t, seen, total)
	// Duplicates come only from requests dispatched at the stop: the num_consumers being sent,
	// the batch collecting (one partition here: the pushes mix streams) and an item split
	// between a delivered and an undelivered batch, each at most max_size.
	bound := (q.NumConsumers + 2) * int(q.Batch.Get().MaxSize)
	t.Logf("stored again after the restart: %d events, %d bytes (bound %d)", dupEvents, dupBytes, bound)
	assert.LessOrEqual(t, dupBytes, bound, "duplicates beyond the requests dispatched at the stop")
}

func bodyOf(t *testing.T, message string) string {
	t.Helper()
	var msg struct {
		Body string `json:"body"`
	}
	require.NoError(t, json.Unmarshal([]byte(message), &msg), message)
	return msg.Body
}

// setBodies replaces the body of every record of ld with f of it.
func setBodies(ld plog.Logs, f func(string) string) {
	rls := ld.ResourceLogs()
	for r := 0; r < rls.Len(); r++ {
		sls := rls.At(r).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lrs.At(k).Body().SetStr(f(lrs.At(k).Body().Str()))
			}
		}
	}
}
