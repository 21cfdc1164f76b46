// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQuietFileWakesOnItsNextWrite: a file quiet long enough is watched for its next write
// instead of being looked at every few polls, and that write is read at once, not at the next
// look of the safety net (a discovery interval away) or of polling (five poll intervals).
func TestQuietFileWakesOnItsNextWrite(t *testing.T) {
	before := quietAfter
	quietAfter = time.Millisecond
	t.Cleanup(func() { quietAfter = before })
	root := t.TempDir()
	c := &collector{}
	cfg := testConfig(root)
	cfg.PollInterval = 2 * time.Second // polled: looked at again after 10 s
	cfg.DiscoveryInterval = 2 * time.Second
	p := newPodLog(t, root, "ns", "quiet", "app", 0)
	p.write("stdout", "first", 0)
	startReceiver(t, cfg, c, nil)
	waitCount(t, c, 1)
	// Two polls: the file is found quiet and watched, then looked at once more with the watch
	// in place.
	time.Sleep(5 * time.Second)
	p.write("stdout", "second", 0)
	start := time.Now()
	waitCount(t, c, 2)
	require.Less(t, time.Since(start), 1500*time.Millisecond, "the write to a quiet file waited for a poll")
	requireExactly(t, c, map[string][]string{key("quiet", "app", "stdout"): {"first", "second"}})
}
