// SPDX-License-Identifier: Apache-2.0

package auditlogreceiver

import (
	"context"
	"fmt"
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
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/auditlogreceiver/internal/metadata"
)

// got is one record as the tests see it.
type got struct {
	body     any
	res, rec map[string]any
	lr       plog.LogRecord
}

type sink struct {
	mu      sync.Mutex
	records []got
}

func (s *sink) consumer(t *testing.T) consumer.Logs {
	c, err := consumer.NewLogs(func(_ context.Context, ld plog.Logs) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					c := plog.NewLogRecord()
					lr.CopyTo(c)
					s.records = append(s.records, got{body: lr.Body().AsRaw(), res: rl.Resource().Attributes().AsRaw(), rec: lr.Attributes().AsRaw(), lr: c})
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return c
}

func (s *sink) all() []got {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]got(nil), s.records...)
}

func (s *sink) waitFor(t *testing.T, n int) []got {
	t.Helper()
	require.Eventually(t, func() bool { return len(s.all()) >= n }, 30*time.Second, 5*time.Millisecond, "want %d records", n)
	return s.all()
}

// memStorage keeps the checkpoint across receiver instances, as file_storage does across
// restarts.
type memStorage struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	data map[string][]byte
}

func (m *memStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return memClient{m}, nil
}

type memClient struct{ m *memStorage }

func (c memClient) Get(_ context.Context, k string) ([]byte, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.m.data[k], nil
}

func (c memClient) Set(_ context.Context, k string, v []byte) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.data[k] = append([]byte(nil), v...)
	return nil
}

func (c memClient) Delete(_ context.Context, k string) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	delete(c.m.data, k)
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

var storageID = component.MustNewID("file_storage")

func testConfig(include ...string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Include = include
	cfg.StartAt = StartAtBeginning
	cfg.PollInterval = 10 * time.Millisecond
	cfg.EventTimeout = 100 * time.Millisecond
	return cfg
}

func start(t *testing.T, cfg *Config, next consumer.Logs, st *memStorage) (*auditReceiver, *componenttest.Telemetry) {
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

func counter(t *testing.T, tel *componenttest.Telemetry, name string) int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		return 0
	}
	var n int64
	if s, ok := m.Data.(metricdata.Sum[int64]); ok {
		for _, dp := range s.DataPoints {
			n += dp.Value
		}
	}
	return n
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	for _, l := range lines {
		_, err = f.WriteString(l + "\n")
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
}

// TestAuditdEvents: a multi-record syscall event is joined by its serial up to EOE, a
// single-record event completes at the timeout, the enriched and node= forms parse, a line that
// is no audit record passes alone with its error, and every resource says audit.
func TestAuditdEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	garbage := "Nov 27 12:00:00 host sshd[1]: not an audit record id=\"x\""
	appendLines(t, path, lineSyscall, lineExecve, lineCwd, linePath0, linePath1, lineProctitle, lineEOE, lineUserLogin, garbage, lineNode)
	s := &sink{}
	_, tel := start(t, testConfig(filepath.Join(dir, "audit.log*")), s.consumer(t), nil)
	recs := s.waitFor(t, 4)
	require.Len(t, recs, 4)
	bySerial := map[int64]got{}
	var bad []got
	for _, g := range recs {
		require.Equal(t, map[string]any{attr.LogFilePath: path, attr.LogType: "audit"}, g.res)
		if sn, ok := g.rec[attr.AuditSerial]; ok {
			bySerial[sn.(int64)] = g
		} else {
			bad = append(bad, g)
		}
		for k := range g.rec {
			require.True(t, attr.Registered(k), k)
		}
	}
	ev := bySerial[4242]
	require.Equal(t, strings.Join([]string{lineSyscall, lineExecve, lineCwd, linePath0, linePath1, lineProctitle, lineEOE}, "\n"), ev.body)
	require.Equal(t, time.UnixMilli(1700000000123).UTC(), ev.lr.Timestamp().AsTime())
	rs := ev.rec[attr.AuditRecords].([]any)
	var types []string
	for _, r := range rs {
		types = append(types, r.(map[string]any)["type"].(string))
	}
	require.Equal(t, []string{"SYSCALL", "EXECVE", "CWD", "PATH", "PATH", "PROCTITLE", "EOE"}, types)
	require.Equal(t, "/usr/bin/runc", rs[0].(map[string]any)["exe"])
	require.Equal(t, "--version", rs[1].(map[string]any)["a1"])
	require.Equal(t, "/lib64/ld-linux-x86-64.so.2", rs[4].(map[string]any)["name"])

	login := bySerial[4243]
	lm := login.rec[attr.AuditRecords].([]any)[0].(map[string]any)
	require.Equal(t, "USER_LOGIN", lm["type"])
	require.Equal(t, "login", lm["op"])
	require.Equal(t, "ec2-user", lm["AUID"])
	require.Equal(t, lineUserLogin, login.body)

	node := bySerial[4250].rec[attr.AuditRecords].([]any)[0].(map[string]any)
	require.Equal(t, "ip-10-0-1-23", node["node"])
	require.Equal(t, "kubelet", node["unit"])

	require.Len(t, bad, 1)
	require.Equal(t, garbage, bad[0].body)
	require.Contains(t, bad[0].rec[attr.AuditParseError], "no type= field")
	require.Equal(t, int64(1), counter(t, tel, "otelcol_receiver_audit_log_parse_errors"))
	require.Equal(t, int64(10), counter(t, tel, "otelcol_receiver_audit_log_lines_read"))
	require.Eventually(t, func() bool { return counter(t, tel, "otelcol_receiver_audit_log_records_emitted") == 4 }, 10*time.Second, 5*time.Millisecond)
}

// TestAuditdInterleaved: records of two events written interleaved, and a repeated key.
func TestAuditdInterleaved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	appendLines(t, path,
		`type=SYSCALL msg=audit(1700000000.001:10): syscall=2 key="a"`,
		`type=SYSCALL msg=audit(1700000000.002:11): syscall=3 key="b"`,
		`type=PATH msg=audit(1700000000.001:10): item=0 name="/etc/shadow" name="again"`,
		`type=EOE msg=audit(1700000000.002:11): `,
		`type=EOE msg=audit(1700000000.001:10): `,
	)
	s := &sink{}
	start(t, testConfig(path), s.consumer(t), nil)
	recs := s.waitFor(t, 2)
	require.Len(t, recs, 2)
	for _, g := range recs {
		rs := g.rec[attr.AuditRecords].([]any)
		switch g.rec[attr.AuditSerial] {
		case int64(10):
			require.Len(t, rs, 3)
			require.Equal(t, []any{"/etc/shadow", "again"}, rs[1].(map[string]any)["name"])
		case int64(11):
			require.Len(t, rs, 2)
		default:
			t.Fatalf("serial %v", g.rec[attr.AuditSerial])
		}
	}
}

// TestKubernetesEvents: API server audit Events (JSON lines) become map bodies with the stage
// timestamp; a line that is not a JSON object passes as text with its error.
func TestKubernetesEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	ev := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"5d0d2f0e-1b8c-4d6a-9a3e-0c1d2e3f4a5b","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/default/pods?limit=500","verb":"list","user":{"username":"kubernetes-admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["10.0.0.5"],"userAgent":"kubectl/v1.31.0","objectRef":{"resource":"pods","namespace":"default","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-27T12:00:00.123456Z","stageTimestamp":"2026-11-27T12:00:00.130001Z","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":""}}`
	appendLines(t, path, ev, `{"kind":"Event","stage":"RequestReceived","requestReceivedTimestamp":"2026-11-27T12:00:01Z"}`, `{"truncated":`, `[1,2]`)
	cfg := testConfig(path)
	cfg.Format = FormatKubernetes
	s := &sink{}
	_, tel := start(t, cfg, s.consumer(t), nil)
	recs := s.waitFor(t, 4)
	require.Len(t, recs, 4)
	m := recs[0].body.(map[string]any)
	require.Equal(t, "list", m["verb"])
	require.Equal(t, "kubernetes-admin", m["user"].(map[string]any)["username"])
	require.Equal(t, time.Date(2026, 11, 27, 12, 0, 0, 130001000, time.UTC), recs[0].lr.Timestamp().AsTime())
	require.Equal(t, time.Date(2026, 11, 27, 12, 0, 1, 0, time.UTC), recs[1].lr.Timestamp().AsTime())
	for _, g := range recs[2:] {
		require.IsType(t, "", g.body)
		require.NotEmpty(t, g.rec[attr.AuditParseError])
	}
	require.Equal(t, map[string]any{attr.LogFilePath: path, attr.LogType: "audit"}, recs[0].res)
	require.Equal(t, int64(2), counter(t, tel, "otelcol_receiver_audit_log_parse_errors"))
}

// TestRestartAndRotation: events written across two receiver lifetimes, a partial last line
// completed later, an auditd rotation (audit.log renamed to audit.log.1, a new audit.log) and
// an event left open at a stop: every event exactly once.
func TestRestartAndRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	st := &memStorage{data: map[string][]byte{}}
	ev := func(serial int) []string {
		return []string{
			fmt.Sprintf(`type=SYSCALL msg=audit(1700000000.000:%d): syscall=59 key="k"`, serial),
			fmt.Sprintf(`type=EXECVE msg=audit(1700000000.000:%d): argc=1 a0="x"`, serial),
			fmt.Sprintf(`type=EOE msg=audit(1700000000.000:%d): `, serial),
		}
	}
	for i := 1; i <= 50; i++ {
		appendLines(t, path, ev(i)...)
	}
	// An event left open (no EOE yet) and a partial line.
	appendLines(t, path, `type=SYSCALL msg=audit(1700000000.000:51): syscall=59 key="k"`)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`type=EXECVE msg=audit(1700000000.000:51): ar`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	cfg := testConfig(filepath.Join(dir, "audit.log*"))
	cfg.EventTimeout = time.Hour // only EOE completes an event here
	s1 := &sink{}
	r1, _ := start(t, cfg, s1.consumer(t), st)
	s1.waitFor(t, 50)
	require.Eventually(t, func() bool { b, _ := (memClient{st}).Get(context.Background(), checkpointKey); return b != nil }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, r1.Shutdown(context.Background()))
	require.Len(t, s1.all(), 50)

	// While stopped: the event completes, more events, a rotation, events in the new file.
	appendLines(t, path, `gc=1 a0="x"`, `type=EOE msg=audit(1700000000.000:51): `)
	for i := 52; i <= 60; i++ {
		appendLines(t, path, ev(i)...)
	}
	require.NoError(t, os.Rename(path, path+".1"))
	for i := 61; i <= 70; i++ {
		appendLines(t, path, ev(i)...)
	}
	cfg2 := testConfig(filepath.Join(dir, "audit.log*"))
	cfg2.EventTimeout = time.Hour
	s2 := &sink{}
	start(t, cfg2, s2.consumer(t), st)
	s2.waitFor(t, 20)
	// Rotation while running.
	require.NoError(t, os.Rename(path+".1", path+".2"))
	require.NoError(t, os.Rename(path, path+".1"))
	for i := 71; i <= 80; i++ {
		appendLines(t, path, ev(i)...)
	}
	s2.waitFor(t, 30)
	seen := map[int64]int{}
	for _, g := range append(s1.all(), s2.all()...) {
		seen[g.rec[attr.AuditSerial].(int64)]++
	}
	for i := int64(1); i <= 80; i++ {
		require.Equal(t, 1, seen[i], "serial %d", i)
	}
	require.Len(t, seen, 80)
	// Event 51 was joined across the stop: its EXECVE line was completed while stopped.
	for _, g := range s2.all() {
		if g.rec[attr.AuditSerial] == int64(51) {
			require.Len(t, g.rec[attr.AuditRecords], 3)
			require.Contains(t, g.body, `type=EXECVE msg=audit(1700000000.000:51): argc=1 a0="x"`)
		}
	}
}

// TestLongLineSkipped: a line over max_line_bytes is skipped and counted, the lines around it
// pass.
func TestLongLineSkipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	long := `type=USER_CMD msg=audit(1700000000.000:2): cmd=` + strings.Repeat("41", 200<<10)
	appendLines(t, path, `type=USER_START msg=audit(1700000000.000:1): res=success`, long, `type=USER_END msg=audit(1700000000.000:3): res=success`)
	cfg := testConfig(path)
	cfg.MaxLineBytes = 64 << 10
	s := &sink{}
	_, tel := start(t, cfg, s.consumer(t), nil)
	recs := s.waitFor(t, 2)
	require.Len(t, recs, 2)
	require.Equal(t, int64(1), recs[0].rec[attr.AuditSerial])
	require.Equal(t, int64(3), recs[1].rec[attr.AuditSerial])
	require.Equal(t, int64(1), counter(t, tel, "otelcol_receiver_audit_log_lines_skipped"))
}

// TestStartAtEnd: the first start skips what the files hold; later lines pass.
func TestStartAtEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	appendLines(t, path, `type=USER_START msg=audit(1700000000.000:1): res=success`)
	cfg := testConfig(path)
	cfg.StartAt = StartAtEnd
	s := &sink{}
	_, tel := start(t, cfg, s.consumer(t), nil)
	require.Eventually(t, func() bool { return counter(t, tel, "otelcol_receiver_audit_log_files") == 1 }, 10*time.Second, 5*time.Millisecond)
	appendLines(t, path, `type=USER_END msg=audit(1700000000.000:2): res=success`)
	recs := s.waitFor(t, 1)
	require.Len(t, recs, 1)
	require.Equal(t, int64(2), recs[0].rec[attr.AuditSerial])
}
