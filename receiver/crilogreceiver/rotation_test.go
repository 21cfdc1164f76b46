// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rotate does what kubelet and the runtime do: rename the file to <n>.log.<ts>, then the
// runtime reopens and creates a new <n>.log.
func (p *podLog) rotate(ts string) string {
	p.t.Helper()
	rotated := p.path + "." + ts
	require.NoError(p.t, p.f.Close())
	require.NoError(p.t, os.Rename(p.path, rotated))
	p.reopen()
	return rotated
}

// TestEntrySplitAcrossRotation: a long entry whose first pieces are in the rotated file and
// whose last piece is in the new file is one record, after everything before it and before
// everything after it. Rotations follow one another quickly, each splitting an entry.
func TestEntrySplitAcrossRotation(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.FlushTimeout = time.Hour // a split entry must not come out flushed
	cfg.DrainGrace = time.Hour   // nor wait for the grace period of the rotated file
	startReceiver(t, cfg, c, nil)
	p := newPodLog(t, root, "ns", "split", "app", 0)
	var want []string
	for r := range 3 {
		before := fmt.Sprintf("before rotation %d", r)
		p.write("stdout", before, 0)
		long := fmt.Sprintf("long entry %d ", r) + strings.Repeat("x", 100)
		// All pieces but the last go to the file that is about to rotate.
		pieces := criLines(&p.clock, "stdout", long, 40)
		cut := strings.LastIndex(strings.TrimSuffix(pieces, "\n"), "\n") + 1
		_, err := p.f.WriteString(pieces[:cut])
		require.NoError(t, err)
		waitCount(t, c, len(want)+1) // the line before the split entry was read
		p.rotate(fmt.Sprintf("20240501-10000%d", r))
		_, err = p.f.WriteString(pieces[cut:])
		require.NoError(t, err)
		want = append(want, before, long)
	}
	p.write("stdout", "after", 0)
	want = append(want, "after")
	requireExactly(t, c, map[string][]string{key("split", "app", "stdout"): want})
	for _, g := range c.snapshot() {
		require.Empty(t, g.attrs["otelcol_k8s.cri.flushed"], "record %q flagged flushed", g.body)
	}
}

// TestLateLineAfterSuccessor: containerd creates the new file before its old writer has
// written the lines it had already read, so the renamed file can grow after its successor
// exists. Those lines are read, in order, before the new file's.
func TestLateLineAfterSuccessor(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.DrainGrace = time.Hour // only the successor rule may close the rotated file
	_, tel := startReceiver(t, cfg, c, nil)
	p := newPodLog(t, root, "ns", "late", "app", 0)
	p.write("stdout", "before rotation", 0)
	waitCount(t, c, 1)

	oldWriter := p.f
	late := criLines(&p.clock, "stdout", "the old writer's last line", 0)
	require.NoError(t, os.Rename(p.path, p.path+".20240501-100000"))
	p.reopen() // the runtime creates the new file first
	p.write("stdout", "first line of the new file", 0)
	// The receiver has found the rotation (and so the new file); the old writer's last line
	// comes a moment later, as containerd's does.
	require.Eventually(t, func() bool {
		return metricSum(t, tel, "otelcol_receiver_cri_log_rotations") == 1
	}, 10*time.Second, 2*time.Millisecond)
	time.Sleep(50 * time.Millisecond) // the old writer's delay, not a wait for the receiver
	_, err := oldWriter.WriteString(late)
	require.NoError(t, err)

	requireExactly(t, c, map[string][]string{key("late", "app", "stdout"): {
		"before rotation", "the old writer's last line", "first line of the new file",
	}})
}
