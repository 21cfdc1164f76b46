// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// journalMessages reads the MESSAGE of every entry of the kubelet's journal file with
// journalctl (systemd's own reader), as a multiset.
func journalMessages(t *testing.T) map[string]int {
	t.Helper()
	file := filepath.Join(journalDir, journalMachineID, "system.journal")
	out, err := exec.CommandContext(context.Background(), "journalctl", "--file", file, "-o", "json", "--no-pager").Output() //nolint:gosec // the test node's own file
	require.NoError(t, err, "journalctl --file %s", file)
	msgs := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var e struct {
			Message any    `json:"MESSAGE"`
			Unit    string `json:"_SYSTEMD_UNIT"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Unit != "kubelet.service" {
			continue
		}
		if m, ok := e.Message.(string); ok && m != "" {
			msgs[m]++
		}
	}
	return msgs
}

// TestKubeletJournal: the real kubelet's lines, written to the node's journal as journald
// stores a service's output, arrive through the shipped journal receiver in the
// infrastructure group, in the kubelet unit's stream, each line as often as the journal holds
// it (lines of the same text are counted as a multiset), and nowhere else.
func TestKubeletJournal(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	if _, err := os.Stat(filepath.Join(journalDir, journalMachineID)); err != nil {
		t.Skip("the kubelet's output is not in a journal (systemd-journal-remote is missing: make journal-tools)")
	}
	want := journalMessages(t)
	require.NotEmpty(t, want, "the kubelet wrote nothing to its journal")
	total := 0
	for _, n := range want {
		total += n
	}
	var got map[string]int
	var where map[string]int
	var missing int
	require.Eventually(t, func() bool {
		got, where = map[string]int{}, map[string]int{}
		for _, g := range e.srv.Groups() {
			streams, err := e.srv.Streams(g.Name)
			require.NoError(t, err)
			for _, s := range streams {
				evs, err := e.srv.Events(g.Name, s.Name)
				require.NoError(t, err)
				for _, ev := range evs {
					for m := range want {
						if strings.Contains(ev.Message, m) || strings.Contains(ev.Message, jsonText(m)) {
							got[m]++
							where[g.Name+" "+s.Name]++
							break
						}
					}
				}
			}
		}
		missing = 0
		for m, n := range want {
			if got[m] < n {
				missing += n - got[m]
			}
		}
		return missing == 0
	}, 2*time.Minute, 2*time.Second, "kubelet journal lines not delivered")
	// The kubelet goes on writing: what was delivered is compared with the journal as it is
	// now, which holds everything that could have been.
	now := journalMessages(t)
	extra := 0
	for m, n := range got {
		if n > now[m] {
			extra += n - now[m]
		}
	}
	t.Logf("%d kubelet journal entries (%d distinct) read back by journalctl; delivered by stream: %v; extra copies %d", total, len(want), where, extra)
	assert.Zero(t, extra, "kubelet lines repeated")
	for w := range where {
		group, stream, _ := strings.Cut(w, " ")
		assert.True(t, strings.HasSuffix(group, ".infrastructure"), "a kubelet line in %s", group)
		assert.Contains(t, stream, "kubelet.service", "a kubelet line in stream %s", stream)
	}
}

// jsonText is s as it appears inside a JSON string (the exporter's messages are JSON).
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
