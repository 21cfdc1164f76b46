// SPDX-License-Identifier: Apache-2.0

package queuestorageextension

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-k8s/otelcol-k8s/extension/queuestorageextension/internal/metadata"
)

func TestClientDirName(t *testing.T) {
	tests := []struct {
		kind        component.Kind
		id          component.ID
		storageName string
		want        string
	}{
		{component.KindExporter, component.MustNewID("cloudwatch_groups"), "logs", "exporter_cloudwatch_groups__logs"},
		{component.KindExporter, component.MustNewIDWithName("cloudwatch_groups", "infra"), "logs", "exporter_cloudwatch_groups_infra_logs"},
		{component.KindReceiver, component.MustNewID("cri_log"), "", "receiver_cri_log__"},
		// No name reaches outside the directory or collides with another's.
		{component.KindExporter, component.MustNewIDWithName("otlp", "a/b"), "..", "exporter_otlp_a~2fb_~2e."},
		{component.KindExporter, component.MustNewIDWithName("otlp", "a~2fb"), "", "exporter_otlp_a~7e2fb_"},
		{component.KindExporter, component.MustNewIDWithName("otlp", "é"), "x y", "exporter_otlp_~c3~a9_x~20y"},
		{component.KindExporter, component.MustNewIDWithName("a", "b_c"), "", "exporter_a_b~5fc_"},
		{component.KindExporter, component.MustNewIDWithName("a_b", "c"), "", "exporter_a_b_c_"},
		{component.KindExporter, component.MustNewIDWithName("a", "b"), "c_d", "exporter_a_b_c~5fd"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, clientDirName(tt.kind, tt.id, tt.storageName))
		})
	}
	// Too long for a file name: the kind, the type and a hash of the whole name.
	long := clientDirName(component.KindExporter, component.MustNewIDWithName("otlp", strings.Repeat("n", 150)), strings.Repeat("s", 100))
	require.Equal(t, "exporter_otlp_~", long[:len("exporter_otlp_~")])
	require.Len(t, long, len("exporter_otlp_~")+64)
	require.NotEqual(t, long, clientDirName(component.KindExporter, component.MustNewIDWithName("otlp", strings.Repeat("n", 150)), strings.Repeat("s", 101)))
}

func TestStartChecksDirectory(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	tests := []struct {
		name    string
		dir     string
		create  bool
		wantErr string
	}{
		{name: "created", dir: filepath.Join(base, "new", "queue"), create: true},
		{name: "missing", dir: filepath.Join(base, "missing"), wantErr: "no such file or directory"},
		{name: "a file", dir: file, wantErr: "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &Config{Directory: tt.dir, CreateDirectory: tt.create, SegmentSize: 1 << 20}
			ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), cfg)
			require.NoError(t, err)
			err = ext.Start(context.Background(), componenttest.NewNopHost())
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
				require.DirExists(t, tt.dir)
			}
			require.NoError(t, ext.Shutdown(context.Background()))
		})
	}
}

func TestClientsAndShutdown(t *testing.T) {
	// Two components' clients keep apart; a second client of the same one is refused; the
	// extension's shutdown closes the clients still open; the data is there at the next start.
	dir := t.TempDir()
	ctx := context.Background()
	_, ext := startQueueStorage(t, dir, 0)
	se := ext.(storage.Extension)
	a, err := se.GetClient(ctx, component.KindExporter, component.MustNewID("cloudwatch_groups"), "logs")
	require.NoError(t, err)
	b, err := se.GetClient(ctx, component.KindReceiver, component.MustNewID("cri_log"), "")
	require.NoError(t, err)
	_, err = se.GetClient(ctx, component.KindExporter, component.MustNewID("cloudwatch_groups"), "logs")
	require.ErrorContains(t, err, "in use by another client")
	require.NoError(t, a.Set(ctx, "k", []byte("exporter")))
	require.NoError(t, b.Set(ctx, "k", []byte("receiver")))
	require.NoError(t, b.Delete(ctx, "k"))
	got, err := a.Get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, "exporter", string(got))
	require.NoError(t, b.Close(ctx))

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = a.Get(canceled, "k")
	require.ErrorIs(t, err, context.Canceled)

	require.NoError(t, ext.Shutdown(ctx))
	_, err = a.Get(ctx, "k")
	require.Error(t, err, "closed by the extension's shutdown")

	_, ext = startQueueStorage(t, dir, 0)
	a, err = ext.(storage.Extension).GetClient(ctx, component.KindExporter, component.MustNewID("cloudwatch_groups"), "logs")
	require.NoError(t, err)
	got, err = a.Get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, "exporter", string(got))
	require.NoError(t, a.Close(ctx))
	require.NoError(t, ext.Shutdown(ctx))
}

func sumOf(t *testing.T, tel *componenttest.Telemetry, name string) int64 {
	t.Helper()
	m, err := tel.GetMetric("otelcol_" + name)
	require.NoError(t, err)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is not an int64 sum", name)
	var v int64
	for _, dp := range sum.DataPoints {
		v += dp.Value
	}
	return v
}

func TestTelemetry(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	ctx := context.Background()
	dir := t.TempDir()
	set := extensiontest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	ext, err := NewFactory().Create(ctx, set, &Config{Directory: dir, CreateDirectory: true, SegmentSize: 4096})
	require.NoError(t, err)
	require.NoError(t, ext.Start(ctx, componenttest.NewNopHost()))
	c, err := ext.(storage.Extension).GetClient(ctx, component.KindExporter, component.MustNewID("cloudwatch_groups"), "logs")
	require.NoError(t, err)

	value := make([]byte, 3000)
	require.NoError(t, c.Set(ctx, "0", value))
	require.NoError(t, c.Set(ctx, "1", value))
	// One group per set: a 16-byte header and a 13-byte record header before key and value.
	require.Equal(t, int64(2*(16+13+1+3000)), sumOf(t, tel, "extension_queue_storage_bytes_written"))
	require.Equal(t, int64(2*(13+1+3000)), sumOf(t, tel, "extension_queue_storage_live_bytes"))
	require.Equal(t, int64(2), sumOf(t, tel, "extension_queue_storage_segments"), "the second set did not fit the first segment")
	_, err = c.Get(ctx, "0")
	require.NoError(t, err)
	require.Equal(t, int64(13+1+3000), sumOf(t, tel, "extension_queue_storage_bytes_read"))
	require.NoError(t, c.Delete(ctx, "0"))
	require.Equal(t, int64(1), sumOf(t, tel, "extension_queue_storage_segments"), "the emptied segment is removed")
	require.Equal(t, int64(13+1+3000), sumOf(t, tel, "extension_queue_storage_live_bytes"))
	require.NoError(t, c.Close(ctx))
	require.Zero(t, sumOf(t, tel, "extension_queue_storage_live_bytes"), "a closed client's bytes are not counted")
	require.Zero(t, sumOf(t, tel, "extension_queue_storage_segments"))

	// A torn tail is dropped and counted at the next open.
	files, err := filepath.Glob(filepath.Join(dir, "exporter_cloudwatch_groups__logs", "*.seg"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	f, err := os.OpenFile(files[0], os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("QSG1 torn"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	c, err = ext.(storage.Extension).GetClient(ctx, component.KindExporter, component.MustNewID("cloudwatch_groups"), "logs")
	require.NoError(t, err)
	require.Equal(t, int64(9), sumOf(t, tel, "extension_queue_storage_recovery_dropped_bytes"))
	require.NoError(t, c.Close(ctx))
	require.NoError(t, ext.Shutdown(ctx))
}
