// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPendingEntryOfADeletedFileSurvivesARestart: the collector stops while a file holds an
// unfinished entry (its pieces read, its last piece not written), and the pod is deleted while
// the collector is down. The pieces live only in the checkpoint: they are emitted, flagged
// flushed, not dropped with the checkpoint.
func TestPendingEntryOfADeletedFileSurvivesARestart(t *testing.T) {
	root := t.TempDir()
	store := newMemStorage()
	cfg := testConfig(root)
	cfg.Storage = &storageID
	cfg.FlushTimeout = time.Hour
	first := &collector{}
	a, _ := startReceiver(t, cfg, first, hostWith(store))
	p := newPodLog(t, root, "ns", "gone", "job", 0)
	// One write: the complete entry and the piece are read in the same turn.
	_, err := p.f.WriteString(criLines(&p.clock, "stdout", "complete", 0) +
		"2024-05-01T10:00:01.000000000Z stdout P first piece of an entry\n")
	require.NoError(t, err)
	waitCount(t, first, 1)
	require.NoError(t, a.Shutdown(t.Context()))
	require.NoError(t, os.RemoveAll(filepath.Dir(filepath.Dir(p.path))))

	second := &collector{}
	startReceiver(t, cfg, second, hostWith(store))
	requireExactly(t, second, map[string][]string{key("gone", "job", "stdout"): {"first piece of an entry"}})
	require.Equal(t, true, attrsOf(t, second, "first piece of an entry")["otelcol_k8s.cri.flushed"])
}
