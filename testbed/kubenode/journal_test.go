// SPDX-License-Identifier: Apache-2.0

package kubenode

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readJournal returns the MESSAGE and _SYSTEMD_UNIT of every entry of file, as journalctl
// (systemd's own reader) reads them.
func readJournal(t *testing.T, file string) [][2]string {
	t.Helper()
	out, err := exec.Command("journalctl", "--file="+file, "-o", "json", "--all", "--no-pager").Output()
	require.NoError(t, err)
	var got [][2]string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		msg, ok := m["MESSAGE"].(string)
		if !ok { // a binary field: journalctl prints its bytes as numbers
			var b []byte
			for _, v := range m["MESSAGE"].([]any) {
				b = append(b, byte(v.(float64)))
			}
			msg = string(b)
		}
		got = append(got, [2]string{msg, m["_SYSTEMD_UNIT"].(string)})
	}
	return got
}

// TestJournalWriter: a program's output, written in pieces that split lines, becomes one
// journal entry per line of the unit, readable by journalctl while the writer still runs; a
// line with a control character is kept byte for byte; Close writes the last partial line.
func TestJournalWriter(t *testing.T) {
	bin := journalRemoteBin()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("systemd-journal-remote is not installed: make journal-tools")
		}
		t.Skip("systemd-journal-remote is not installed: make journal-tools")
	}
	if _, err := exec.LookPath("journalctl"); err != nil {
		t.Skip("journalctl is not installed: make journal-tools")
	}
	file := filepath.Join(t.TempDir(), "journal", "0123456789abcdef0123456789abcdef", "system.journal")
	w, err := NewJournalWriter(JournalOptions{RemoteBin: bin, File: file, Hostname: "node-1"}, "kubelet.service", 4242)
	require.NoError(t, err)
	lines := []string{
		`I1127 12:00:00.000000    4242 server.go:1253] "Started kubelet"`,
		`E1127 12:00:01.000000    4242 kubelet.go:2412] "Error syncing pod" pod="default/web"`,
		"a line with \x1b[31mcolour\x1b[0m",
	}
	_, err = w.Write([]byte(lines[0] + "\n" + lines[1][:20]))
	require.NoError(t, err)
	_, err = w.Write([]byte(lines[1][20:] + "\n" + lines[2] + "\n"))
	require.NoError(t, err)
	// Read while the writer runs: the kubelet's lines are there before it stops.
	require.Eventually(t, func() bool {
		if _, err := os.Stat(file); err != nil {
			return false
		}
		return len(readJournal(t, file)) == 3
	}, 30*time.Second, 50*time.Millisecond)
	_, err = w.Write([]byte("last line without newline"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Equal(t, 4, w.Entries())
	got := readJournal(t, file)
	require.Len(t, got, 4)
	for i, want := range append(lines, "last line without newline") {
		require.Equal(t, [2]string{want, "kubelet.service"}, got[i])
	}
}
