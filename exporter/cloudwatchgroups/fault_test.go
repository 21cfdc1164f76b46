package cloudwatchgroups

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

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// storageHost is a component.Host offering one storage extension.
type storageHost struct {
	exts map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.exts }

func startFileStorage(t *testing.T, dir string) (component.ID, extension.Extension) {
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
// must be stored exactly once.
func TestFaultsAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("long fault test")
	}
	awsEnv(t)
	b := startLocal(t, localcloudwatch.Config{
		Seed: 7,
		Faults: localcloudwatch.Faults{
			ThrottleRate: 0.30, ServerErrorRate: 0.05,
			Latency: localcloudwatch.Duration(2 * time.Millisecond), LatencyJitter: localcloudwatch.Duration(3 * time.Millisecond),
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
			rls := ld.ResourceLogs()
			for r := 0; r < rls.Len(); r++ {
				lrs := rls.At(r).ScopeLogs().At(0).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					lrs.At(k).Body().SetStr(fmt.Sprintf("call %d %s", i, lrs.At(k).Body().Str()))
				}
			}
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
	total := int64(calls * perSource * len(sources))
	require.Eventually(t, func() bool { return b.local.Stats().EventsAccepted >= total }, 3*time.Minute, 50*time.Millisecond)
	stop()

	st := b.local.Stats()
	t.Logf("throttles %d, injected 5xx %d, requests %v", st.Throttles, st.InjectedServerErrors, st.Requests)
	assert.Positive(t, st.InjectedThrottles)
	assert.Positive(t, st.InjectedServerErrors)

	seen := map[string]int{}
	for _, ev := range b.storedEvents(t) {
		seen[bodyOf(t, ev.Message)]++
	}
	missing, dup := 0, 0
	for i := range calls {
		for _, s := range sources {
			for k := range perSource {
				switch n := seen[fmt.Sprintf("call %d %s#%d", i, s.filePath(), k)]; {
				case n == 0:
					missing++
				case n > 1:
					dup++
				}
			}
		}
	}
	assert.Zero(t, missing, "events lost")
	assert.Zero(t, dup, "events stored more than once")
	assert.Len(t, seen, int(total))
}

func bodyOf(t *testing.T, message string) string {
	t.Helper()
	var msg struct {
		Body string `json:"body"`
	}
	require.NoError(t, json.Unmarshal([]byte(message), &msg), message)
	return msg.Body
}
