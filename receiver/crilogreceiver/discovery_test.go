// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pinnedCount is the number of files the pinner opened that the loop has not adopted yet.
func pinnedCount(r *criReceiver) int { return r.tracker.Pinner().Pending() }

// TestDiscoveryWhileTheConsumerBlocks: the read loop is stuck in ConsumeLogs (the shipped queue
// blocks when full). Meanwhile a short-lived pod writes its lines and is deleted, and another
// file is created, rotated and followed by a new one. Their files are opened while the loop is
// blocked, so once the consumer accepts again every line arrives.
func TestDiscoveryWhileTheConsumerBlocks(t *testing.T) {
	root := t.TempDir()
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	c := &collector{gate: gate, entered: entered}
	r, _ := startReceiver(t, testConfig(root), c, nil)
	busy := newPodLog(t, root, "ns", "busy", "app", 0)
	busy.write("stdout", "blocks the loop", 0)
	<-entered // the loop is inside ConsumeLogs and stays there until the gate opens

	brief := newPodLog(t, root, "ns", "brief", "job", 0)
	rot := newPodLog(t, root, "ns", "rot", "app", 0)
	var briefWant, rotWant []string
	for i := range 20 {
		briefWant = append(briefWant, fmt.Sprintf("job line %d", i))
		brief.write("stdout", briefWant[i], 0)
		rotWant = append(rotWant, fmt.Sprintf("before rotation %d", i))
		rot.write("stdout", rotWant[i], 0)
	}
	require.Eventually(t, func() bool { return pinnedCount(r) == 2 }, 10*time.Second, 5*time.Millisecond, "new files not opened while the consumer blocks")
	require.NoError(t, os.RemoveAll(filepath.Dir(filepath.Dir(brief.path)))) // the Job's pod is deleted
	rot.rotate("20240501-100000")
	rotWant = append(rotWant, "after rotation")
	rot.write("stdout", "after rotation", 0)
	require.Eventually(t, func() bool { return pinnedCount(r) == 3 }, 10*time.Second, 5*time.Millisecond, "the new file after the rotation was not opened")

	close(gate)
	requireExactly(t, c, map[string][]string{
		key("busy", "app", "stdout"):  {"blocks the loop"},
		key("brief", "job", "stdout"): briefWant,
		key("rot", "app", "stdout"):   rotWant,
	})
}
