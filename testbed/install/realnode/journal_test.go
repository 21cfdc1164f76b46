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
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cursorEntry names a journal entry by its cursor's sequence number id and sequence number
// (the "s=" and "i=" fields), which identify it within the file's sequence.
func cursorEntry(cursor string) string {
	var s, i string
	for _, f := range strings.Split(cursor, ";") {
		if v, ok := strings.CutPrefix(f, "s="); ok {
			s = v
		}
		if v, ok := strings.CutPrefix(f, "i="); ok {
			i = v
		}
	}
	if s == "" || i == "" {
		return ""
	}
	return s + "/" + i
}

// journalEntries reads the kubelet's journal file with journalctl (systemd's own reader) and
// returns its kubelet entries by cursor.
func journalEntries(t *testing.T) map[string]bool {
	t.Helper()
	file := filepath.Join(journalDir, journalMachineID, "system.journal")
	out, err := exec.CommandContext(context.Background(), "journalctl", "--file", file, "-o", "json", "--no-pager").Output()
	require.NoError(t, err, "journalctl --file %s", file)
	entries := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var e struct {
			Cursor string `json:"__CURSOR"`
			Unit   string `json:"_SYSTEMD_UNIT"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Unit != "kubelet.service" {
			continue
		}
		if k := cursorEntry(e.Cursor); k != "" {
			entries[k] = true
		}
	}
	return entries
}

// TestKubeletJournal: the real kubelet's lines, written to the node's journal as journald
// stores a service's output, arrive through the shipped journal receiver and klog_parser in
// the infrastructure group, in the kubelet unit's stream: every entry journalctl reads,
// identified by its cursor, exactly once, and nothing that is not in the journal.
func TestKubeletJournal(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	if _, err := os.Stat(filepath.Join(journalDir, journalMachineID)); err != nil {
		t.Skip("the kubelet's output is not in a journal (systemd-journal-remote is missing: make journal-tools)")
	}
	want := journalEntries(t)
	require.NotEmpty(t, want, "the kubelet wrote nothing to its journal")
	var got map[string]int // entry -> copies stored
	var where map[string]int
	var missing []string
	delivered := assert.Eventually(t, func() bool {
		got, where = map[string]int{}, map[string]int{}
		for _, ev := range mustStored(t, e) {
			var m struct {
				Attributes map[string]any `json:"attributes"`
				Resource   map[string]any `json:"resource"`
			}
			if json.Unmarshal([]byte(ev.Message), &m) != nil || m.Resource["otelcol_k8s.journal.unit"] != "kubelet.service" {
				continue
			}
			cursor, _ := m.Attributes["otelcol_k8s.journal.cursor"].(string)
			got[cursorEntry(cursor)]++
			where[ev.group+" "+ev.stream]++
		}
		missing = missing[:0]
		for k := range want {
			if got[k] == 0 {
				missing = append(missing, k)
			}
		}
		return len(missing) == 0
	}, 2*time.Minute, 2*time.Second, "kubelet journal entries not delivered")
	if !delivered {
		sort.Strings(missing)
		t.Fatalf("%d of %d kubelet journal entries not delivered (first %v); delivered by stream %v", len(missing), len(want), missing[:min(5, len(missing))], where)
	}
	// The kubelet goes on writing: what was delivered is compared with the journal as it is
	// now, which holds everything that could have been.
	now := journalEntries(t)
	repeated, unknown := 0, 0
	for k, n := range got {
		if n > 1 {
			repeated += n - 1
		}
		if !now[k] {
			unknown++
		}
	}
	t.Logf("%d kubelet journal entries read by journalctl, each delivered; %d records by stream %v; %d repeated, %d not in the journal", len(want), len(got), where, repeated, unknown)
	assert.Zero(t, repeated, "kubelet entries repeated")
	assert.Zero(t, unknown, "records of entries the journal does not hold")
	for w := range where {
		group, stream, _ := strings.Cut(w, " ")
		assert.True(t, strings.HasSuffix(group, ".infrastructure"), "a kubelet entry in %s", group)
		assert.Contains(t, stream, "kubelet.service", "a kubelet entry in stream %s", stream)
	}
}
