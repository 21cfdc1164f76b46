// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// journalRemote returns systemd-journal-remote's path (`make journal-tools` installs it;
// OTELCOL_K8S_JOURNAL_REMOTE overrides). Without it the scenario skips, and fails under CI.
func journalRemote(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("OTELCOL_K8S_JOURNAL_REMOTE"), "/usr/lib/systemd/systemd-journal-remote", "/lib/systemd/systemd-journal-remote"}
	for _, p := range candidates {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("systemd-journal-remote is not installed: run make journal-tools")
	}
	t.Skip("systemd-journal-remote is not installed: run make journal-tools")
	return ""
}

// journalEntry is one entry of the journal export format (text fields only).
type journalEntry struct {
	realtime time.Time
	fields   [][2]string
}

// writeJournal appends entries to the journal file at path (created when missing) with
// systemd's own writer.
func writeJournal(t *testing.T, bin, path string, monotonic *uint64, entries []journalEntry) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, e := range entries {
		*monotonic += 1000
		fmt.Fprintf(&b, "__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=%d\n_BOOT_ID=%s\n", e.realtime.UnixMicro(), *monotonic, journalBoot)
		for _, f := range e.fields {
			fmt.Fprintf(&b, "%s=%s\n", f[0], f[1])
		}
		b.WriteByte('\n')
	}
	cmd := exec.Command(bin, "--output="+path, "-")
	cmd.Stdin = &b
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("systemd-journal-remote: %v: %s", err, out)
	}
}

const (
	journalBoot     = "0123456789abcdef0123456789abcdef"
	journalMachine  = "4f1b2c3d4e5f60718293a4b5c6d7e8f9" // persistent journal, /var/log/journal
	volatileMachine = "a1b2c3d4e5f60718293a4b5c6d7e8f90" // volatile journal, /run/log/journal
)

// journalToken marks an entry; the scenario counts every stored copy of each.
var journalToken = regexp.MustCompile(`jtok-([0-9]+)-end`)

// journalBatch returns n entries numbered from first: the kubelet's klog lines, containerd's
// logfmt lines, kernel messages, and entries of a unit the shipped configuration does not list
// (every fifth), whose numbers go to skipped.
func journalBatch(first, n int, skipped map[int]bool) []journalEntry {
	out := make([]journalEntry, 0, n)
	now := time.Now()
	for i := first; i < first+n; i++ {
		e := journalEntry{realtime: now.Add(time.Duration(i-first) * time.Microsecond)}
		switch i % 5 {
		case 0:
			e.fields = [][2]string{
				{"_SYSTEMD_UNIT", "kubelet.service"},
				{"SYSLOG_IDENTIFIER", "kubelet"},
				{"_PID", "1201"},
				{"PRIORITY", "6"},
				{"MESSAGE", fmt.Sprintf(`I1127 12:00:00.000000    1201 kubelet.go:2412] "SyncLoop ADD" source="api" pods=["ns1/web-%d"] id=jtok-%d-end`, i, i)},
			}
		case 1:
			e.fields = [][2]string{
				{"_SYSTEMD_UNIT", "containerd.service"},
				{"SYSLOG_IDENTIFIER", "containerd"},
				{"_PID", "980"},
				{"PRIORITY", "6"},
				{"MESSAGE", fmt.Sprintf(`time="2026-11-27T12:00:00Z" level=info msg="StartContainer jtok-%d-end returns successfully"`, i)},
			}
		case 2:
			e.fields = [][2]string{
				{"_TRANSPORT", "kernel"},
				{"SYSLOG_IDENTIFIER", "kernel"},
				{"PRIORITY", "4"},
				{"MESSAGE", fmt.Sprintf("eth0: link up jtok-%d-end", i)},
			}
		case 3:
			// A kubelet line that claims to be an audit record and names a file: content never
			// chooses the group.
			e.fields = [][2]string{
				{"_SYSTEMD_UNIT", "kubelet.service"},
				{"SYSLOG_IDENTIFIER", "kubelet"},
				{"_PID", "1201"},
				{"PRIORITY", "3"},
				{"MESSAGE", fmt.Sprintf(`E1127 12:00:00.000000    1201 pod_workers.go:1301] "Error syncing pod" otelcol_k8s.log.type="audit" log.file.path="/var/log/audit/audit.log" id=jtok-%d-end`, i)},
			}
		case 4:
			e.fields = [][2]string{
				{"_SYSTEMD_UNIT", "sshd.service"},
				{"SYSLOG_IDENTIFIER", "sshd"},
				{"_PID", "77"},
				{"PRIORITY", "6"},
				{"MESSAGE", fmt.Sprintf("Accepted publickey jtok-%d-end", i)},
			}
			skipped[i] = true
		}
		e.fields = append(e.fields, [2]string{"_HOSTNAME", "node-1"})
		out = append(out, e)
	}
	return out
}

// TestJournalToInfrastructure: journal files written by systemd-journal-remote (systemd's own
// writer) under the simulated node root, a persistent journal and a volatile one, are read by
// the shipped node configuration (the journal receiver, its units and identifiers, file_storage
// checkpoints) and arrive in the infrastructure group of the local CloudWatch Logs server:
// every entry of a listed unit or of the kernel exactly once, across a live append and a
// graceful restart with entries written while the collector was down; no entry of an unlisted
// unit; one stream per unit of a journal file (kernel messages in the file's own); nothing in
// any other group.
func TestJournalToInfrastructure(t *testing.T) {
	t.Parallel()
	bin := journalRemote(t)
	e := newEnv(t, localcloudwatch.Config{Seed: 37})
	root := filepath.Join(e.dir, "node")
	persistent := filepath.Join(root, "var/log/journal", journalMachine, "system.journal")
	volatile := filepath.Join(root, "run/log/journal", volatileMachine, "system.journal")
	if err := os.MkdirAll(filepath.Join(e.dir, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	skipped := map[int]bool{}
	var monoP, monoV uint64
	const per = 200
	written := 0
	write := func(path string, mono *uint64) {
		writeJournal(t, bin, path, mono, journalBatch(written, per, skipped))
		written += per
	}
	// Before the first start: the shipped start_at (beginning) reads them.
	write(persistent, &monoP)
	write(volatile, &monoV)
	e.start()
	e.waitReady()
	defer e.dumpLog()
	// Appended while the collector follows the files.
	write(persistent, &monoP)
	write(volatile, &monoV)
	wantStored := func() int { return written - len(skipped) }
	waitJournal(t, e, wantStored())
	// Stopped gracefully, entries written while down, started on the same file_storage.
	if err := e.col.Stop(30 * time.Second); err != nil {
		t.Fatalf("collector stop: %v", err)
	}
	write(persistent, &monoP)
	write(volatile, &monoV)
	e.start()
	e.waitReady()
	write(persistent, &monoP)
	waitJournal(t, e, wantStored())
	time.Sleep(*quiet) // late duplicates, if any, arrive within it
	if err := e.col.Stop(30 * time.Second); err != nil {
		t.Errorf("collector stop: %v", err)
	}

	seen := map[int]int{}
	streams := map[string]int{}
	for _, g := range e.srv.Groups() {
		ss, err := e.srv.Streams(g.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			evs, err := e.srv.Events(g.Name, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			if g.Name != "local.infrastructure" {
				t.Errorf("%d events in group %s, stream %s: every journal record is infrastructure", len(evs), g.Name, s.Name)
				continue
			}
			streams[s.Name] += len(evs)
			for _, ev := range evs {
				m := journalToken.FindAllStringSubmatch(ev.Message, -1)
				if len(m) != 1 {
					t.Errorf("event without exactly one token: %q", ev.Message)
					continue
				}
				var n int
				_, _ = fmt.Sscan(m[0][1], &n)
				seen[n]++
			}
		}
	}
	missing, dup, unlisted := 0, 0, 0
	for i := range written {
		switch c := seen[i]; {
		case skipped[i] && c > 0:
			unlisted++
		case !skipped[i] && c == 0:
			missing++
		case c > 1:
			dup++
		}
	}
	t.Logf("%d entries written (%d of unlisted units), %d events stored in %d streams %v", written, len(skipped), len(seen), len(streams), streams)
	if missing > 0 || dup > 0 || unlisted > 0 {
		t.Errorf("missing %d, duplicated %d, unlisted units stored %d", missing, dup, unlisted)
	}
	// One stream per unit of a journal file and node; kernel messages in the file's own.
	wantStreams := map[string]bool{}
	for _, f := range []string{persistent, volatile} {
		base := "node-1/" + strings.TrimPrefix(f, "/")
		wantStreams[base] = true
		wantStreams[base+"%unit/kubelet.service"] = true
		wantStreams[base+"%unit/containerd.service"] = true
	}
	for s := range streams {
		if !wantStreams[s] {
			t.Errorf("unexpected stream %s: one stream per unit of a journal file and node", s)
		}
	}
	if len(streams) != len(wantStreams) {
		t.Errorf("streams %v, want %v", streams, wantStreams)
	}
}

// waitJournal waits until want events are stored (or the delivery wait ends).
func waitJournal(t *testing.T, e *env, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), *deliverWait)
	defer cancel()
	if n, err := harness.WaitStored(ctx, e.srv, int64(want), e.col); err != nil {
		t.Fatalf("stored %d of %d events: %v", n, want, err)
	}
}
