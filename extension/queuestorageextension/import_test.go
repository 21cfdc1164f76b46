// SPDX-License-Identifier: Apache-2.0

package queuestorageextension

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// TestFileStorageName checks the file names against file_storage itself: a client of each
// id and storage name is created there and its file must be the one fileStorageName names.
func TestFileStorageName(t *testing.T) {
	for _, c := range []struct {
		kind    component.Kind
		id      component.ID
		storage string
	}{
		{component.KindExporter, component.MustNewID("cloudwatch_groups"), "logs"},
		{component.KindExporter, component.MustNewID("cloudwatch_groups"), "known_groups"},
		{component.KindReceiver, component.MustNewIDWithName("cri_log", "a/b c"), ""},
		{component.KindExporter, component.MustNewIDWithName("otlp_http", "x~é"), "traces"},
	} {
		t.Run(c.id.String()+"_"+c.storage, func(t *testing.T) {
			dir := t.TempDir()
			_, ext := startFileStorage(t, dir)
			cl, err := ext.(storage.Extension).GetClient(context.Background(), c.kind, c.id, c.storage)
			require.NoError(t, err)
			require.NoError(t, cl.Close(context.Background()))
			require.NoError(t, ext.Shutdown(context.Background()))
			require.FileExists(t, filepath.Join(dir, fileStorageName(c.kind, c.id, c.storage)))
		})
	}
}

// startImportingQueueStorage starts queue_storage on dir with import_file_storage from.
func startImportingQueueStorage(t *testing.T, dir, from string) (component.ID, extension.Extension) {
	t.Helper()
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Directory, cfg.ImportFileStorage, cfg.SegmentSize = dir, from, 16<<10
	set := extensiontest.NewNopSettings(f.Type())
	ext, err := f.Create(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), storageHost{}))
	return set.ID, ext
}

// TestImportFileStoragePersistentQueue: exporterhelper's persistent queue in file_storage is
// left with 60 of 100 items queued or in flight; the same exporter then starts with its queue
// in queue_storage importing from file_storage's directory and delivers those 60, each item
// exactly once over the two runs (rule 14). The file_storage file is renamed, so a restart
// imports nothing again.
func TestImportFileStoragePersistentQueue(t *testing.T) {
	const items, firstRun = 100, 40
	fsDir, qsDir := t.TempDir(), t.TempDir()
	sink := &gatedSink{open: firstRun, delivered: map[string]int{}}

	id, ext := startFileStorage(t, fsDir)
	leaveQueued(t, id, ext, sink, items)
	old := filepath.Join(fsDir, "exporter_queue_test__logs")
	require.FileExists(t, old)

	id, ext = startImportingQueueStorage(t, qsDir, fsDir)
	deliverAll(t, id, ext, sink, items)
	require.NoFileExists(t, old)
	require.FileExists(t, old+importedSuffix)
}

// TestImportRepeatedAfterCrash: a process killed after copying the keys and before the rename
// imports the same file again at its next start; the copy overwrites every key with the same
// value, so the client holds exactly file_storage's keys and values either way (rule 14).
func TestImportRepeatedAfterCrash(t *testing.T) {
	fsDir, qsDir := t.TempDir(), t.TempDir()
	_, ext := startFileStorage(t, fsDir)
	cl, err := ext.(storage.Extension).GetClient(context.Background(), component.KindExporter, component.MustNewID("cloudwatch_groups"), "logs")
	require.NoError(t, err)
	want := map[string]string{}
	for i := range 3000 { // more than one import batch of importBatchBytes
		k, v := strconv.Itoa(i), string(make([]byte, 2000+i))
		want[k] = v
		require.NoError(t, cl.Set(context.Background(), k, []byte(v)))
	}
	require.NoError(t, cl.Close(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))
	old := filepath.Join(fsDir, "exporter_cloudwatch_groups__logs")
	raw, err := os.ReadFile(old)
	require.NoError(t, err)

	for round := range 2 {
		_, qs := startImportingQueueStorage(t, qsDir, fsDir)
		c, err := qs.(storage.Extension).GetClient(context.Background(), component.KindExporter, component.MustNewID("cloudwatch_groups"), "logs")
		require.NoError(t, err)
		for k, v := range want {
			got, err := c.Get(context.Background(), k)
			require.NoError(t, err)
			require.Equal(t, v, string(got), "round %d key %s", round, k)
		}
		require.NoError(t, c.Close(context.Background()))
		require.NoError(t, qs.Shutdown(context.Background()))
		require.NoFileExists(t, old)
		// The crash before the rename: the file is back as it was.
		require.NoError(t, os.WriteFile(old, raw, 0o600))
	}
}

// TestImportOnlyIntoWhatTheFileHolds: a client that already holds keys of its own (a queue in
// use since an earlier import, a file_storage file that came back after a downgrade) is not
// overwritten by a file_storage file: the file stays, the client keeps its keys and the skip
// is counted. A client holding only what an interrupted import of the file copied is imported
// into (rule 14).
func TestImportOnlyIntoWhatTheFileHolds(t *testing.T) {
	file := map[string]string{"0": "item 0", "1": "item 1", "qmv0": "indexes 0..2"}
	for _, c := range []struct {
		name    string
		holds   map[string]string // what the queue_storage client holds before the import
		imports bool
	}{
		{name: "empty client", holds: nil, imports: true},
		{name: "interrupted import", holds: map[string]string{"0": "item 0", "1": "item 1"}, imports: true},
		{name: "key the file lacks", holds: map[string]string{"0": "item 0", "2": "item 2"}},
		{name: "key with another value", holds: map[string]string{"qmv0": "indexes 5..9"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			id := component.MustNewID("cloudwatch_groups")
			fsDir, qsDir := t.TempDir(), t.TempDir()
			_, fs := startFileStorage(t, fsDir)
			fc, err := fs.(storage.Extension).GetClient(ctx, component.KindExporter, id, "logs")
			require.NoError(t, err)
			for k, v := range file {
				require.NoError(t, fc.Set(ctx, k, []byte(v)))
			}
			require.NoError(t, fc.Close(ctx))
			require.NoError(t, fs.Shutdown(ctx))
			old := filepath.Join(fsDir, fileStorageName(component.KindExporter, id, "logs"))

			// What the client holds, written without importing.
			_, qs := startImportingQueueStorage(t, qsDir, "")
			qc, err := qs.(storage.Extension).GetClient(ctx, component.KindExporter, id, "logs")
			require.NoError(t, err)
			for k, v := range c.holds {
				require.NoError(t, qc.Set(ctx, k, []byte(v)))
			}
			require.NoError(t, qc.Close(ctx))
			require.NoError(t, qs.Shutdown(ctx))

			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(ctx)) })
			f := NewFactory()
			cfg := f.CreateDefaultConfig().(*Config)
			cfg.Directory, cfg.ImportFileStorage, cfg.SegmentSize = qsDir, fsDir, 16<<10
			set := extensiontest.NewNopSettings(f.Type())
			set.TelemetrySettings = tel.NewTelemetrySettings()
			ext, err := f.Create(ctx, set, cfg)
			require.NoError(t, err)
			require.NoError(t, ext.Start(ctx, storageHost{}))
			qc, err = ext.(storage.Extension).GetClient(ctx, component.KindExporter, id, "logs")
			require.NoError(t, err)
			want := c.holds
			if c.imports {
				want = file
			}
			for _, k := range []string{"0", "1", "2", "qmv0"} {
				got, err := qc.Get(ctx, k)
				require.NoError(t, err)
				if v, ok := want[k]; ok {
					require.Equal(t, v, string(got), "key %s", k)
				} else {
					require.Nil(t, got, "key %s", k)
				}
			}
			require.NoError(t, qc.Close(ctx))
			require.NoError(t, ext.Shutdown(ctx))
			if c.imports {
				require.NoFileExists(t, old)
				require.Equal(t, int64(len(file)), sumOf(t, tel, "extension_queue_storage_imported_keys"))
				require.Zero(t, sumOf(t, tel, "extension_queue_storage_import_skipped_files"))
			} else {
				require.FileExists(t, old)
				require.NoFileExists(t, old+importedSuffix)
				require.Zero(t, sumOf(t, tel, "extension_queue_storage_imported_keys"))
				require.Equal(t, int64(1), sumOf(t, tel, "extension_queue_storage_import_skipped_files"))
			}
		})
	}
}
