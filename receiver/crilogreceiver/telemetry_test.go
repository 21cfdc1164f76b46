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

// TestReadLagAndDrainingTelemetry: the read lag counts bytes written and not read yet while the
// next consumer refuses; a deleted file held open counts as draining, with its size.
func TestReadLagAndDrainingTelemetry(t *testing.T) {
	root := t.TempDir()
	c := &collector{refuse: 1 << 30}
	cfg := testConfig(root)
	cfg.MaxBytesPerPoll = 4096
	cfg.DrainGrace = time.Hour // the rotated file stays open until the test lets it go
	// Written before the start: the receiver's first look sees the whole file (the lag is
	// measured at each file's last look).
	p := newPodLog(t, root, "ns", "lag", "app", 0)
	for i := range 1000 {
		p.write("stdout", fmt.Sprintf("line %d %s", i, strings.Repeat("z", 60)), 0)
	}
	_, tel := startReceiver(t, cfg, c, nil)
	st, err := os.Stat(p.path)
	require.NoError(t, err)
	size := st.Size()
	require.Eventually(t, func() bool {
		lag := metricSum(t, tel, "otelcol_receiver_cri_log_read_lag")
		return lag > size-2*4096 && lag < size
	}, 10*time.Second, 5*time.Millisecond, "read lag while refused: %d of %d bytes", metricSum(t, tel, "otelcol_receiver_cri_log_read_lag"), size)

	c.mu.Lock()
	c.refuse = 0
	c.mu.Unlock()
	waitCount(t, c, 1000)
	require.Eventually(t, func() bool { return metricSum(t, tel, "otelcol_receiver_cri_log_read_lag") == 0 }, 10*time.Second, 5*time.Millisecond)

	require.NoError(t, os.Remove(p.path)) // the pod is deleted; the open descriptor keeps the file
	require.Eventually(t, func() bool {
		return metricSum(t, tel, "otelcol_receiver_cri_log_files_draining") == 1 &&
			metricSum(t, tel, "otelcol_receiver_cri_log_draining_bytes") == size
	}, 10*time.Second, 5*time.Millisecond, "draining %d files, %d bytes",
		metricSum(t, tel, "otelcol_receiver_cri_log_files_draining"), metricSum(t, tel, "otelcol_receiver_cri_log_draining_bytes"))
}

// TestRotationAndLongLineCounters: a rename rotation is counted as a rotation, and a physical
// line longer than max_log_size plus 64 KiB is counted as a long line; both are exported.
func TestRotationAndLongLineCounters(t *testing.T) {
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.MaxLogSize = 1024
	cfg.MaxBytesPerPoll = 4096 // the read buffer holds max_log_size + 64 KiB: a longer line is cut
	_, tel := startReceiver(t, cfg, c, nil)
	p := newPodLog(t, root, "ns", "rot", "app", 0)
	p.write("stdout", strings.Repeat("L", 1024+64<<10+10), 0)
	p.write("stdout", "after", 0)
	waitCount(t, c, 2)
	require.Eventually(t, func() bool { return metricSum(t, tel, "otelcol_receiver_cri_log_long_lines") == 1 },
		10*time.Second, 5*time.Millisecond)
	require.NoError(t, os.Rename(p.path, p.path+".20240501-100000"))
	require.Eventually(t, func() bool { return metricSum(t, tel, "otelcol_receiver_cri_log_rotations") == 1 },
		10*time.Second, 5*time.Millisecond)
}
