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
