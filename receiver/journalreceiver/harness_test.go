// SPDX-License-Identifier: Apache-2.0

package journalreceiver

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver/internal/metadata"
)

// got is one record as the tests see it.
type got struct {
	cursor   string
	body     any
	res, rec map[string]any
	lr       plog.LogRecord
}

// sink collects records; before, when set, runs on every batch before it is accepted.
type sink struct {
	mu      sync.Mutex
	records []got
	before  func(n int) bool
	// markEnd is the record count after the batch for which before returned true.
	markEnd int
	refuse  int // refuse this many batches first (a retryable error)
}

func (s *sink) consumer(t *testing.T) consumer.Logs {
	c, err := consumer.NewLogs(func(_ context.Context, ld plog.Logs) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.refuse > 0 {
			s.refuse--
			return errRefused
		}
		mark := s.before != nil && s.before(len(s.records))
		defer func() {
			if mark {
				s.markEnd = len(s.records)
			}
		}()
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					cur, _ := lr.Attributes().Get(attr.JournalCursor)
					c := plog.NewLogRecord()
					lr.CopyTo(c)
					s.records = append(s.records, got{
						cursor: cur.Str(), body: lr.Body().AsRaw(),
						res: rl.Resource().Attributes().AsRaw(), rec: lr.Attributes().AsRaw(), lr: c,
					})
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return c
}

type refusedError struct{}

func (refusedError) Error() string { return "downstream busy" }

var errRefused = refusedError{}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.records)
}

func (s *sink) all() []got {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]got(nil), s.records...)
}

// memStorage is a storage extension whose content can be copied at any instant: a copy is
// what a kill -9 at that instant leaves behind.
type memStorage struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	data map[string][]byte
}

func newMemStorage() *memStorage { return &memStorage{data: map[string][]byte{}} }

func (s *memStorage) snapshot() *memStorage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &memStorage{data: maps.Clone(s.data)}
}

func (s *memStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return memClient{s}, nil
}

type memClient struct{ s *memStorage }

func (c memClient) Get(_ context.Context, k string) ([]byte, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.data[k], nil
}

func (c memClient) Set(_ context.Context, k string, v []byte) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.data[k] = append([]byte(nil), v...)
	return nil
}

func (c memClient) Delete(_ context.Context, k string) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	delete(c.s.data, k)
	return nil
}

func (c memClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value, _ = c.Get(ctx, op.Key)
		case storage.Set:
			_ = c.Set(ctx, op.Key, op.Value)
		case storage.Delete:
			_ = c.Delete(ctx, op.Key)
		}
	}
	return nil
}

func (memClient) Close(context.Context) error { return nil }

type host struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h host) GetExtensions() map[component.ID]component.Component { return h.ext }

var storageID = component.MustNewID("test_storage")

// testConfig reads dir quickly, with no filters unless the test sets them.
func testConfig(dir string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Directories = []string{dir}
	cfg.Units, cfg.Identifiers = nil, nil
	cfg.PollInterval = 10 * time.Millisecond
	cfg.MaxBatch = 97
	return cfg
}

func start(t *testing.T, cfg *Config, next consumer.Logs, st *memStorage) (*journalReceiver, *componenttest.Telemetry) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	h := host{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{}}
	if st != nil {
		h.ext[storageID] = st
		id := storageID
		cfg.Storage = &id
	}
	r, err := newReceiver(set, cfg, next)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), h))
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	return r, tel
}

func waitFor(t *testing.T, s *sink, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return s.count() >= n }, 60*time.Second, 5*time.Millisecond, "want %d records", n)
}
