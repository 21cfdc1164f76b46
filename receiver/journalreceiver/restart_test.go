// SPDX-License-Identifier: Apache-2.0

package journalreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver/internal/journalfile"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver/internal/journaltest"
)

// rotate archives the active file the way journald does: the active file's content stays in
// an @-named archive (state archived), and the new active file continues the sequence. Here
// the new file starts as a copy, so the archive's every entry is in both files: a stricter
// version of the rotation that repeats one entry.
func rotate(t *testing.T, active string) string {
	t.Helper()
	b, err := os.ReadFile(active)
	require.NoError(t, err)
	r, err := journalfile.NewReader(journalfile.BytesSource(b))
	require.NoError(t, err)
	h := r.Header()
	archive := filepath.Join(filepath.Dir(active), fmt.Sprintf("system@%s-%016x-%016x.journal", h.SeqnumID, h.HeadEntrySeqnum, h.HeadEntryRealtime))
	a := append([]byte(nil), b...)
	a[16] = byte(journalfile.StateArchived)
	a[24]++ // another file id
	require.NoError(t, os.WriteFile(archive, a, 0o640))
	return archive
}

func cursors(recs []got) map[string]int {
	m := map[string]int{}
	for _, g := range recs {
		m[g.cursor]++
	}
	return m
}

// TestRotationDedup: entries in an archive and in the file after it are passed on once, in
// sequence order; an archive left by a crash (.journal~) is read too.
func TestRotationDedup(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "0123456789abcdef0123456789abcdef")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	active := filepath.Join(dir, "system.journal")
	entries := journaltest.Generate(31, 900, 9, 1_700_000_000_000_000)
	journaltest.Write(t, active, entries[:300], nil)
	rotate(t, active)
	journaltest.Write(t, active, entries[300:600], nil)
	// An unclean file from an earlier run, of another sequence.
	crashed := filepath.Join(dir, "system@0000000000000001-0000000000000002.journal~")
	journaltest.Write(t, crashed+".tmp.journal", entries[600:], nil)
	require.NoError(t, os.Rename(crashed+".tmp.journal", crashed))

	s := &sink{}
	r, tel := start(t, testConfig(filepath.Dir(dir)), s.consumer(t), nil)
	waitFor(t, s, 900)
	require.Eventually(t, func() bool { return counter(t, tel, "otelcol_receiver_journal_duplicates_skipped") == 300 }, 30e9, 5e6)
	require.NoError(t, r.Shutdown(context.Background()))
	recs := s.all()
	require.Len(t, recs, 900)
	require.Equal(t, int64(900), counter(t, tel, "otelcol_receiver_journal_records_emitted"))
	for c, n := range cursors(recs) {
		require.Equal(t, 1, n, c)
	}
	// All records of the active series carry the active file's path, the archive's included.
	for _, g := range recs[:10] {
		require.Contains(t, []string{active, filepath.Join(dir, "system.journal")}, g.res["log.file.path"])
	}
}

// TestRestart: a stop mid-file and a restart with the same storage pass every entry exactly
// once; a kill (the storage as it was while a batch was being delivered, before its checkpoint
// was saved) passes each entry at least once, and exactly once after dedup by cursor.
func TestRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	active := filepath.Join(dir, "system.journal")
	entries := journaltest.Generate(41, 2000, 9, 1_700_000_000_000_000)
	journaltest.Write(t, active, entries[:1200], nil)

	st := newMemStorage()
	var killed *memStorage
	s1 := &sink{}
	s1.before = func(n int) bool {
		if n >= 500 && killed == nil {
			killed = st.snapshot() // this batch is delivered; its checkpoint is not saved yet
			return true
		}
		return false
	}
	s1.refuse = 2 // retried, not lost
	r1, _ := start(t, testConfig(dir), s1.consumer(t), st)
	waitFor(t, s1, 700)
	require.NoError(t, r1.Shutdown(context.Background())) // a clean stop somewhere mid-file
	first := s1.all()
	require.NotNil(t, killed)

	journaltest.Write(t, active, entries[1200:], nil) // written while stopped

	// Clean restart.
	s2 := &sink{}
	r2, _ := start(t, testConfig(dir), s2.consumer(t), st)
	waitFor(t, s2, len(entries)-len(first))
	require.NoError(t, r2.Shutdown(context.Background()))
	all := append(append([]got(nil), first...), s2.all()...)
	require.Len(t, all, len(entries))
	for c, n := range cursors(all) {
		require.Equal(t, 1, n, "clean restart: %s", c)
	}

	// Restart from the killed storage: at least once; duplicates only of the batch in flight.
	s3 := &sink{}
	r3, _ := start(t, testConfig(dir), s3.consumer(t), killed)
	beforeKill := s1.markEnd // delivered when killed
	require.Greater(t, beforeKill, 500)
	require.Eventually(t, func() bool {
		seen := cursors(append(append([]got(nil), first[:beforeKill]...), s3.all()...))
		return len(seen) == len(entries)
	}, 30e9, 5e6)
	require.NoError(t, r3.Shutdown(context.Background()))
	merged := cursors(append(append([]got(nil), first[:beforeKill]...), s3.all()...))
	require.Len(t, merged, len(entries), "every entry at least once")
	dups := 0
	for _, n := range merged {
		dups += n - 1
	}
	require.LessOrEqual(t, dups, 97, "at most one batch (max_batch) again")
	t.Logf("kill: %d entries delivered again, removed by cursor", dups)
}

// TestLiveAppendAndRotation: entries appended while the receiver reads, then the active file
// renamed to its archive name (as journald rotates) and a new active file: every entry once,
// the renamed file not opened a second time.
func TestLiveAppendAndRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	active := filepath.Join(dir, "system.journal")
	entries := journaltest.Generate(51, 800, 9, 1_700_000_000_000_000)
	journaltest.Write(t, active, entries[:300], nil)
	s := &sink{}
	r, tel := start(t, testConfig(dir), s.consumer(t), nil)
	waitFor(t, s, 300)
	journaltest.Write(t, active, entries[300:500], nil)
	waitFor(t, s, 500)

	archive := filepath.Join(dir, "system@rotated.journal")
	require.NoError(t, os.Rename(active, archive))
	f, err := os.OpenFile(archive, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{byte(journalfile.StateArchived)}, 16)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	journaltest.Write(t, active, entries[500:], nil)
	waitFor(t, s, 800)
	require.Eventually(t, func() bool { return counter(t, tel, "otelcol_receiver_journal_files") == 2 }, 30e9, 5e6)
	require.NoError(t, r.Shutdown(context.Background()))
	recs := s.all()
	require.Len(t, recs, 800)
	for c, n := range cursors(recs) {
		require.Equal(t, 1, n, c)
	}
	require.Zero(t, counter(t, tel, "otelcol_receiver_journal_duplicates_skipped"))
}

// TestCorruptFileCounted: a truncated file gives what it safely can, counted, and another
// file beside it is read whole.
func TestCorruptFileCounted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.journal")
	good := filepath.Join(dir, "good.journal")
	entries := journaltest.Generate(61, 400, 9, 1_700_000_000_000_000)
	journaltest.Write(t, bad, entries[:200], nil)
	journaltest.Write(t, good, entries[200:], nil)
	r, err := journalfile.Open(bad)
	require.NoError(t, err)
	// Cut halfway between the first entry array and the last object (the hash tables before
	// them hold no entries).
	h := r.Header()
	require.NoError(t, r.Close())
	require.NoError(t, os.Truncate(bad, int64(h.EntryArrayOffset+(h.TailObjectOffset-h.EntryArrayOffset)/2)))

	s := &sink{}
	rcv, tel := start(t, testConfig(dir), s.consumer(t), nil)
	waitFor(t, s, 200)
	require.Eventually(t, func() bool { return counter(t, tel, "otelcol_receiver_journal_corrupt_skips") >= 1 }, 30e9, 5e6)
	require.NoError(t, rcv.Shutdown(context.Background()))
	n := len(s.all())
	require.Greater(t, n, 200, "a prefix of the truncated file")
	require.Less(t, n, 400)
	t.Logf("truncated halfway: %d of 200 entries recovered", n-200)
}
