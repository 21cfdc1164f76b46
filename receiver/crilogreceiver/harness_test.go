// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/metadata"
)

// got is one delivered record.
type got struct {
	key   string // namespace/pod/container/restart/stream
	body  string
	attrs map[string]any
	res   map[string]any
	time  time.Time
	// accepted is when the batch holding the record was acknowledged.
	accepted time.Time
}

// collector is a consumer.Logs that records what it receives. It can refuse batches (like
// memory_limiter) or block (like a stuck exporter).
type collector struct {
	mu      sync.Mutex
	records []got
	batches int
	refuse  int           // refuse this many more batches
	gate    chan struct{} // when set, ConsumeLogs waits for it to close (or ctx)
	entered chan struct{} // when set, ConsumeLogs signals it on entry (without blocking)
	frozen  bool          // after freeze(), batches are neither recorded nor acknowledged
	refused int
}

func (c *collector) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *collector) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	c.mu.Lock()
	gate, frozen, entered := c.gate, c.frozen, c.entered
	c.mu.Unlock()
	if entered != nil {
		select {
		case entered <- struct{}{}:
		default:
		}
	}
	if frozen {
		<-ctx.Done()
		return ctx.Err()
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen {
		return errors.New("frozen")
	}
	if c.refuse > 0 {
		c.refuse--
		c.refused++
		return errors.New("memory limit reached, try later")
	}
	c.batches++
	now := time.Now()
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes()
		str := func(k string) string {
			if v, ok := res.Get(k); ok {
				return v.AsString()
			}
			return ""
		}
		prefix := fmt.Sprintf("%s/%s/%s/%s/", str("k8s.namespace.name"), str("k8s.pod.name"), str("k8s.container.name"), str("k8s.container.restart_count"))
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				stream := ""
				if v, ok := lr.Attributes().Get("log.iostream"); ok {
					stream = v.Str()
				}
				c.records = append(c.records, got{
					key: prefix + stream, body: lr.Body().Str(),
					attrs: lr.Attributes().AsRaw(), res: res.AsRaw(), time: lr.Timestamp().AsTime(), accepted: now,
				})
			}
		}
	}
	return nil
}

// freeze makes the consumer stop acknowledging, as if the process had been killed.
func (c *collector) freeze() {
	c.mu.Lock()
	c.frozen = true
	c.mu.Unlock()
}

func (c *collector) snapshot() []got {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]got(nil), c.records...)
}

// bodies returns the bodies received per key, in arrival order.
func (c *collector) bodies() map[string][]string {
	out := map[string][]string{}
	for _, g := range c.snapshot() {
		out[g.key] = append(out[g.key], g.body)
	}
	return out
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.records)
}

// memStorage is a storage extension whose content can be copied at any instant: a copy taken
// while a receiver runs is exactly what a kill -9 at that instant would leave behind.
type memStorage struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	data map[string][]byte
	// written counts the bytes of every value set.
	written int64
}

func newMemStorage() *memStorage { return &memStorage{data: map[string][]byte{}} }

func (s *memStorage) copy() *memStorage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &memStorage{data: maps.Clone(s.data)}
}

func (s *memStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return &memClient{s: s}, nil
}

type memClient struct{ s *memStorage }

func (c *memClient) Get(_ context.Context, k string) ([]byte, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.data[k], nil
}

func (c *memClient) Set(_ context.Context, k string, v []byte) error {
	return c.Batch(context.Background(), storage.SetOperation(k, v))
}

func (c *memClient) Delete(_ context.Context, k string) error {
	return c.Batch(context.Background(), storage.DeleteOperation(k))
}

func (c *memClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value = c.s.data[op.Key]
		case storage.Set:
			c.s.data[op.Key] = append([]byte(nil), op.Value...)
			c.s.written += int64(len(op.Value))
		case storage.Delete:
			delete(c.s.data, op.Key)
		}
	}
	return nil
}

func (c *memClient) Close(context.Context) error { return nil }

type host struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h host) GetExtensions() map[component.ID]component.Component { return h.ext }

var storageID = component.MustNewID("test_storage")

func hostWith(ext extension.Extension) component.Host {
	h := host{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{}}
	if ext != nil {
		h.ext[storageID] = ext
	}
	return h
}

// testConfig returns a configuration reading root/*/*/*.log quickly.
func testConfig(root string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Include = []string{filepath.Join(root, "*", "*", "*.log")}
	cfg.StartAt = StartAtBeginning
	cfg.PollInterval = 10 * time.Millisecond
	cfg.DiscoveryInterval = 50 * time.Millisecond
	cfg.DrainGrace = 200 * time.Millisecond
	cfg.FlushTimeout = 500 * time.Millisecond
	cfg.RetryOnFailure = RetryConfig{InitialInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond}
	return cfg
}

func startReceiver(t *testing.T, cfg *Config, next consumer.Logs, h component.Host) (*criReceiver, *componenttest.Telemetry) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.ID = component.NewID(metadata.Type) // the same id across restarts: same storage client
	rcv, err := newReceiver(set, cfg, next)
	require.NoError(t, err)
	if h == nil {
		h = hostWith(nil)
	}
	require.NoError(t, rcv.Start(context.Background(), h))
	t.Cleanup(func() { _ = rcv.Shutdown(context.Background()) })
	return rcv, tel
}

// podLog is a container log file being written the way a runtime writes it.
type podLog struct {
	t     *testing.T
	dir   string
	path  string
	f     *os.File
	clock time.Time
}

func newPodLog(t *testing.T, root, ns, pod, container string, restart int) *podLog {
	dir := filepath.Join(root, fmt.Sprintf("%s_%s_%s-uid", ns, pod, pod), container)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := &podLog{
		t: t, dir: dir, path: filepath.Join(dir, fmt.Sprintf("%d.log", restart)),
		clock: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC),
	}
	p.reopen()
	return p
}

func (p *podLog) reopen() {
	f, err := os.OpenFile(p.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(p.t, err)
	p.f = f
	p.t.Cleanup(func() { _ = f.Close() })
}

// write writes one entry, split into pieces of at most piece bytes (0: one piece).
func (p *podLog) write(stream, content string, piece int) {
	_, err := p.f.WriteString(criLines(&p.clock, stream, content, piece))
	require.NoError(p.t, err)
}

func criLines(clock *time.Time, stream, content string, piece int) string {
	var b strings.Builder
	for {
		*clock = clock.Add(time.Microsecond)
		ts := clock.Format(time.RFC3339Nano)
		if piece > 0 && len(content) > piece {
			fmt.Fprintf(&b, "%s %s P %s\n", ts, stream, content[:piece])
			content = content[piece:]
			continue
		}
		fmt.Fprintf(&b, "%s %s F %s\n", ts, stream, content)
		return b.String()
	}
}

func key(pod, container, stream string) string {
	return fmt.Sprintf("ns/%s/%s/0/%s", pod, container, stream)
}

// waitCount waits until c has received at least n records.
func waitCount(t *testing.T, c *collector, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return c.count() >= n }, 20*time.Second, 5*time.Millisecond,
		"received %d records, want %d", c.count(), n)
}

// requireExactly checks that exactly want arrived per key, in order, and nothing else.
func requireExactly(t *testing.T, c *collector, want map[string][]string) {
	t.Helper()
	total := 0
	for _, v := range want {
		total += len(v)
	}
	waitCount(t, c, total)
	time.Sleep(50 * time.Millisecond) // let any duplicate arrive before judging
	gotBodies := c.bodies()
	for k, w := range want {
		g := gotBodies[k]
		require.Len(t, g, len(w), "key %s: record count", k)
		for i := range w {
			if w[i] != g[i] {
				require.Failf(t, "mismatch", "key %s record %d: got %.80q want %.80q", k, i, g[i], w[i])
			}
		}
	}
	require.Len(t, gotBodies, len(want), "unexpected keys: %v", keysOf(gotBodies))
}

func keysOf(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// attrs of the first record whose body is body.
func attrsOf(t *testing.T, c *collector, body string) map[string]any {
	for _, g := range c.snapshot() {
		if g.body == body {
			return g.attrs
		}
	}
	t.Fatalf("no record with body %q", body)
	return nil
}

func metricSum(t *testing.T, tel *componenttest.Telemetry, name string) int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		return 0
	}
	var total int64
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			total += p.Value
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			total += p.Value
		}
	}
	return total
}

// waitFilesOpen waits until the receiver reports n open files: the files present now have
// been discovered (and, with start_at end, positioned at their end).
func waitFilesOpen(t *testing.T, tel *componenttest.Telemetry, n int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		return metricSum(t, tel, "otelcol_receiver_cri_log_files_open") == n
	}, 10*time.Second, 2*time.Millisecond)
}
