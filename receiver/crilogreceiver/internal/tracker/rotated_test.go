// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gzipFile compresses name to name.gz and removes name, as kubelet does at the rotation after
// the one that created name.
func gzipFile(t *testing.T, name string) {
	t.Helper()
	raw, err := os.ReadFile(name)
	require(t, err)
	f, err := os.Create(name + ".gz")
	require(t, err)
	zw := gzip.NewWriter(f)
	_, err = zw.Write(raw)
	require(t, err)
	require(t, zw.Close())
	require(t, f.Close())
	require(t, os.Remove(name))
}

// checkpointAfter writes content to p, reads it with a first tracker and returns the state a
// checkpoint would hold when that collector stops.
func checkpointAfter(t *testing.T, root, p, content string) State {
	t.Helper()
	writeFile(t, p, content, false)
	tr := testTracker(t, root, nil, true, false)
	tr.Discover(0)
	readAll(t, tr, false)
	st := tr.Readers()[0].State()
	for _, r := range tr.Readers() {
		_ = r.Close()
	}
	return st
}

func lines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString(line(i))
	}
	return b.String()
}

func wantLines(from, to int) string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("line %d", i))
	}
	return fmt.Sprint(out)
}

// TestRestartAcrossTwoRotations: the collector is down while kubelet rotates twice, in its real
// order (rename; at the next rotation compress the previous one, rename again), so the
// checkpointed file is compressed, the one in between is a plain rotated file that was never
// opened, and the new current file took the checkpointed file's freed inode (ext4 reuses it at
// once). The root filesystem is read-only: nothing may be written to TMPDIR. Every line written
// after the checkpoint is read, once, oldest file first.
func TestRestartAcrossTwoRotations(t *testing.T) {
	root := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(root, "read-only-root")) // does not exist: writes fail
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	st := checkpointAfter(t, root, p, lines(1, 2))

	// Down: more lines, rotation 1, the next file, rotation 2 (compressing rotation 1).
	writeFile(t, p, lines(3, 40), true)
	r1 := p + ".20240501-100000"
	require(t, os.Rename(p, r1))
	writeFile(t, p, lines(41, 80), false)
	gzipFile(t, r1)
	r2 := p + ".20240501-100100"
	require(t, os.Rename(p, r2))
	writeFile(t, p, lines(81, 90), false)
	// The new current file took the checkpointed file's inode.
	fi, err := os.Stat(p)
	require(t, err)
	st.ID = fileID(fi)

	tr2 := testTracker(t, root, []State{st}, false, false)
	gone, errs := tr2.Discover(0)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(gone) != 0 {
		t.Fatalf("the resumed checkpoint was reported gone: %v", gone)
	}
	if got := readAll(t, tr2, true); fmt.Sprint(got) != wantLines(3, 90) {
		t.Fatalf("got  %v\nwant %v", got, wantLines(3, 90))
	}
}

// TestFailedResumeKeepsTheCheckpoint: a checkpoint whose compressed file cannot be read is not
// deleted (a later start, with the file repaired or readable, can still resume it) and is
// counted.
func TestFailedResumeKeepsTheCheckpoint(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	st := checkpointAfter(t, root, p, lines(1, 2))
	writeFile(t, p, lines(3, 2000), true)
	r1 := p + ".20240501-100000"
	require(t, os.Rename(p, r1))
	gzipFile(t, r1)
	full, err := os.ReadFile(r1 + ".gz")
	require(t, err)
	require(t, os.WriteFile(r1+".gz", full[:len(full)/2], 0o644))

	tr2 := testTracker(t, root, []State{st}, false, false)
	gone, errs := tr2.Discover(0)
	if len(errs) == 0 {
		t.Fatal("a corrupt compressed file was resumed without an error")
	}
	if len(gone) != 0 {
		t.Fatalf("the checkpoint of a failed resume was deleted: %v", gone)
	}
	if kept := tr2.Retained(); len(kept) != 1 || kept[0].ID != st.ID {
		t.Fatalf("retained %v", kept)
	}
	if tr2.Stats.ResumeFailures != 1 {
		t.Fatalf("resume failures %d", tr2.Stats.ResumeFailures)
	}
	gone, _ = tr2.Discover(1)
	if len(gone) != 0 {
		t.Fatalf("the checkpoint of a failed resume was deleted at the next discovery: %v", gone)
	}
}
