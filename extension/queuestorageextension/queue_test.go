// SPDX-License-Identifier: Apache-2.0

package queuestorageextension

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/plog"
)

// storageHost offers the storage extension to the exporter.
type storageHost struct {
	exts map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.exts }

// backend starts one storage extension on dir.
type backend struct {
	name  string
	start func(tb testing.TB, dir string) (component.ID, extension.Extension)
}

// backends are queue_storage, with segments of segmentSize (0: the default), and file_storage.
func backends(segmentSize int64) []backend {
	return []backend{
		{name: "queue_storage", start: func(tb testing.TB, dir string) (component.ID, extension.Extension) {
			return startQueueStorage(tb, dir, segmentSize)
		}},
		{name: "file_storage", start: startFileStorage},
	}
}

// startQueueStorage starts queue_storage on dir with segments of segmentSize (0: the default).
func startQueueStorage(t testing.TB, dir string, segmentSize int64) (component.ID, extension.Extension) {
	t.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Directory = dir
	if segmentSize > 0 {
		cfg.SegmentSize = segmentSize
	}
	set := extensiontest.NewNopSettings(f.Type())
	ext, err := f.Create(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), storageHost{}))
	return set.ID, ext
}

func startFileStorage(t testing.TB, dir string) (component.ID, extension.Extension) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	set := extensiontest.NewNopSettings(f.Type())
	ext, err := f.Create(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), storageHost{}))
	return set.ID, ext
}

// gatedSink is the exporter's push function: it takes the first `open` items, then fails every
// push with a retryable error (the exporter's retry waits, and its shutdown leaves the item in
// the queue).
type gatedSink struct {
	mu        sync.Mutex
	open      int
	delivered map[string]int
	refused   int
}

func (s *gatedSink) push(_ context.Context, ld plog.Logs) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.delivered) >= s.open {
		s.refused++
		return errors.New("the sink is closed")
	}
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		sls := rls.At(i).ScopeLogs()
		for j := range sls.Len() {
			lrs := sls.At(j).LogRecords()
			for k := range lrs.Len() {
				id, _, _ := strings.Cut(lrs.At(k).Body().Str(), "|")
				s.delivered[id]++
			}
		}
	}
	return nil
}

func (s *gatedSink) counts() (delivered, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.delivered), s.refused
}

const queueConsumers = 2

// startQueue starts the exporter queue_test (the same id every time: a restart finds its
// queue) with exporterhelper's persistent queue in the storage extension ext: queueConsumers
// consumers, no batching, blocking when full if block is set, and retry's back-off.
func startQueue(tb testing.TB, storageID component.ID, ext extension.Extension, push consumer.ConsumeLogsFunc, block bool, retry configretry.BackOffConfig) exporter.Logs {
	tb.Helper()
	qcfg := exporterhelper.NewDefaultQueueConfig()
	qcfg.StorageID = &storageID
	qcfg.NumConsumers = queueConsumers
	qcfg.BlockOnOverflow = block
	qcfg.Batch = configoptional.None[exporterhelper.BatchConfig]()
	set := exportertest.NewNopSettings(component.MustNewType("queue_test"))
	set.ID = component.NewID(set.ID.Type())
	exp, err := exporterhelper.NewLogs(context.Background(), set, &struct{}{}, push,
		exporterhelper.WithQueue(configoptional.Some(qcfg)), exporterhelper.WithRetry(retry))
	require.NoError(tb, err)
	require.NoError(tb, exp.Start(context.Background(), storageHost{exts: map[component.ID]component.Component{storageID: ext}}))
	return exp
}

func startQueuedExporter(t *testing.T, storageID component.ID, ext extension.Extension, sink *gatedSink) exporter.Logs {
	t.Helper()
	retry := configretry.NewDefaultBackOffConfig()
	// A refused item waits for the shutdown, which leaves it in the queue.
	retry.InitialInterval, retry.MaxInterval, retry.MaxElapsedTime = time.Hour, time.Hour, 0
	return startQueue(t, storageID, ext, sink.push, false, retry)
}

// logOf is one record of about 1 KiB, so that the queue's items fill several segments.
func logOf(id string) plog.Logs {
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr(id + "|" + strings.Repeat("x", 1000))
	return ld
}

// TestPersistentQueueRestart runs exporterhelper's persistent queue (collector v0.160) over
// queue_storage and, in the same test, over file_storage: items in, some consumed, the
// collector stopped with the rest queued or in flight, then started again on the same
// directory; every item is delivered exactly once across the two runs, on both backends.
func TestPersistentQueueRestart(t *testing.T) {
	const items, firstRun = 100, 40
	for _, b := range backends(16 << 10) {
		t.Run(b.name, func(t *testing.T) {
			dir := t.TempDir()
			sink := &gatedSink{open: firstRun, delivered: map[string]int{}}

			id, ext := b.start(t, dir)
			leaveQueued(t, id, ext, sink, items)
			if b.name == "queue_storage" {
				require.GreaterOrEqual(t, len(segmentFiles(t, dir)), 4, "the 60 items left fill several segments")
			}

			id, ext = b.start(t, dir)
			deliverAll(t, id, ext, sink, items)
			if b.name == "queue_storage" {
				// Everything delivered: what is left is the active segment and the one holding
				// the last metadata, nothing of the items (rule 7).
				require.LessOrEqual(t, len(segmentFiles(t, dir)), 2)
			}
		})
	}
}

// leaveQueued offers items items to an exporter whose queue is in ext, waits until the sink
// took its first sink.open and every consumer holds a refused item in its retry wait (nothing
// moves any more), then shuts the exporter and ext down with the rest queued or in flight.
func leaveQueued(t *testing.T, id component.ID, ext extension.Extension, sink *gatedSink, items int) {
	t.Helper()
	exp := startQueuedExporter(t, id, ext, sink)
	for i := range items {
		require.NoError(t, exp.ConsumeLogs(context.Background(), logOf("item-"+strconv.Itoa(i))))
	}
	require.Eventually(t, func() bool {
		delivered, refused := sink.counts()
		return delivered == sink.open && refused == queueConsumers
	}, 30*time.Second, 5*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))
}

// segmentFiles lists the queue's segment files.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "exporter_queue_test__logs", "*.seg"))
	require.NoError(t, err)
	return segs
}

// deliverAll opens the sink, runs a queued exporter over ext until every one of items was
// delivered, shuts both down and checks each item arrived exactly once.
func deliverAll(t *testing.T, id component.ID, ext extension.Extension, sink *gatedSink, items int) {
	t.Helper()
	sink.mu.Lock()
	sink.open = items
	sink.mu.Unlock()
	exp := startQueuedExporter(t, id, ext, sink)
	require.Eventually(t, func() bool {
		delivered, _ := sink.counts()
		return delivered == items
	}, 30*time.Second, 5*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))
	for i := range items {
		require.Equal(t, 1, sink.delivered["item-"+strconv.Itoa(i)], "item %d", i)
	}
}
