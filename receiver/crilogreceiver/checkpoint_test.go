// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/tracker"
)

// TestLargeEntryCheckpointsStayCheap: one 960 KiB entry arrives in 16 KiB pieces, one piece per
// turn. Checkpoints name where the unfinished entry starts instead of holding its pieces, and
// are written at most every checkpoint_interval while busy: the storage writes stay far below
// the entry's size (rewriting the pending pieces at every turn wrote about 30 MiB). A kill -9
// while the entry is unfinished, then a restart, re-reads its pieces: it arrives once, whole.
func TestLargeEntryCheckpointsStayCheap(t *testing.T) {
	root := t.TempDir()
	store := newMemStorage()
	cfg := testConfig(root)
	cfg.Storage = &storageID
	cfg.FlushTimeout = time.Hour
	cfg.MaxBytesPerPoll = 16<<10 + 64 // one piece per turn
	first := &collector{}
	startReceiver(t, cfg, first, hostWith(store))
	p := newPodLog(t, root, "ns", "big", "app", 0)
	chunk := strings.Repeat("y", 16<<10)
	var pieces strings.Builder
	for range 60 {
		p.clock = p.clock.Add(time.Microsecond)
		pieces.WriteString(p.clock.Format(time.RFC3339Nano) + " stdout P " + chunk + "\n")
	}
	_, err := p.f.WriteString(pieces.String())
	require.NoError(t, err)
	size := int64(pieces.Len())
	// The checkpoint reaches the end of the pieces (the loop went idle and saved).
	require.Eventually(t, func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		for k, v := range store.data {
			if s, err := tracker.UnmarshalState(v); err == nil && strings.HasPrefix(k, filePrefixKey) && s.Offset == size {
				return true
			}
		}
		return false
	}, 20*time.Second, 5*time.Millisecond)
	killed := store.copy()
	store.mu.Lock()
	written := store.written
	store.mu.Unlock()
	require.Less(t, written, int64(256<<10), "checkpoint writes for a 960 KiB unfinished entry")

	p.write("stdout", "end", 0)
	want := map[string][]string{key("big", "app", "stdout"): {strings.Repeat(chunk, 60) + "end"}}
	requireExactly(t, first, want)

	second := &collector{}
	startReceiver(t, cfg, second, hostWith(killed))
	requireExactly(t, second, want)
}
