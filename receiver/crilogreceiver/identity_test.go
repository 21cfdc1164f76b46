// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/tracker"
)

// TestRetainedCheckpointSurvivesInodeReuse: a checkpoint whose rotated file cannot be resumed (a
// cut .gz) is kept for a later start, and the new 0.log has taken its file's inode (ext4 hands a
// freed inode to the next new file at once). The new file's checkpoint must not be written
// under the kept checkpoint's key: the kept one must still be in storage after the new file was
// read and saved.
func TestRetainedCheckpointSurvivesInodeReuse(t *testing.T) {
	root := t.TempDir()
	store := newMemStorage()
	cfg := testConfig(root)
	cfg.Storage = &storageID
	first := &collector{}
	a, _ := startReceiver(t, cfg, first, hostWith(store))
	p := newPodLog(t, root, "ns", "reuse", "app", 0)
	p.write("stdout", "before the stop", 0)
	waitCount(t, first, 1)
	require.NoError(t, a.Shutdown(t.Context()))
	var kept tracker.State
	for k, v := range store.data {
		if strings.HasPrefix(k, filePrefixKey) {
			s, err := tracker.UnmarshalState(v)
			require.NoError(t, err)
			kept = s
			delete(store.data, k)
		}
	}
	require.NotZero(t, kept.FP.Len)

	// Down: lines, rotation, compression cut short (a corrupt .gz), a new current file.
	for i := range 2000 {
		p.write("stdout", fmt.Sprintf("while down %d", i), 0)
	}
	require.NoError(t, p.f.Close())
	rotated := p.path + ".20240501-100000"
	require.NoError(t, os.Rename(p.path, rotated))
	gzipAndRemove(t, rotated, 0)
	full, err := os.ReadFile(rotated + ".gz")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(rotated+".gz", full[:len(full)/2], 0o644))
	p.reopen()
	p.write("stdout", "new file", 0)
	// The new file has the old one's inode: the checkpoint is stored under that identity, in the
	// (device.inode) key format a checkpoint had before keys were made unique.
	fi, err := os.Stat(p.path)
	require.NoError(t, err)
	sys := fi.Sys().(*syscall.Stat_t)
	kept.ID = tracker.FileID{Dev: uint64(sys.Dev), Ino: sys.Ino} //nolint:unconvert // platform widths
	k := filePrefixKey + kept.ID.String()
	store.data[k] = tracker.MarshalState(kept)
	store.data[indexKey] = []byte(k)

	second := &collector{}
	b, _ := startReceiver(t, cfg, second, hostWith(store))
	requireExactly(t, second, map[string][]string{key("reuse", "app", "stdout"): {"new file"}})
	require.NoError(t, b.Shutdown(t.Context()))

	saved, ok := store.data[k]
	require.True(t, ok, "the kept checkpoint was deleted")
	s, err := tracker.UnmarshalState(saved)
	require.NoError(t, err)
	require.Equal(t, kept.FP, s.FP, "the kept checkpoint was overwritten by the new file's")
	require.Contains(t, strings.Split(string(store.data[indexKey]), "\n"), k)
}
