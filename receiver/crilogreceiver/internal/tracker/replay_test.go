// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/joiner"
)

func piece(i int, stream, tag, content string) string {
	return fmt.Sprintf("2024-05-01T10:00:01.%09dZ %s %s %s\n", i, stream, tag, content)
}

// TestUnfinishedEntryIsReReadNotStored: a large entry is being written in pieces (its last one
// not yet written) while the other stream goes on. The checkpoint holds where the entry starts,
// not its pieces, so its size does not grow with the entry; a restart from it re-reads the
// pieces and emits the entry once, whole, and none of the other stream's entries again.
func TestUnfinishedEntryIsReReadNotStored(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	chunk := strings.Repeat("x", 700)
	var content strings.Builder
	content.WriteString(piece(0, "stderr", "F", "before"))
	for i := 1; i <= 20; i++ {
		content.WriteString(piece(i, "stdout", "P", chunk))
		content.WriteString(piece(i, "stderr", "F", fmt.Sprintf("err %d", i)))
	}
	writeFile(t, p, content.String(), false)
	tr := testTracker(t, root, nil, true, false)
	tr.cfg.Read.MaxLogSize = 1 << 20
	tr.Discover(0)
	first := readAll(t, tr, false)
	if len(first) != 21 {
		t.Fatalf("before the stop: %d records", len(first))
	}
	st := tr.Readers()[0].State()
	enc := MarshalState(st)
	if len(enc) > 256 {
		t.Fatalf("the checkpoint holds %d bytes for a 14,000-byte unfinished entry", len(enc))
	}
	for _, r := range tr.Readers() {
		_ = r.Close()
	}

	writeFile(t, p, piece(21, "stdout", "F", "end")+piece(22, "stderr", "F", "after"), true)
	dec, err := UnmarshalState(enc)
	require(t, err)
	tr2 := testTracker(t, root, []State{dec}, false, false)
	tr2.cfg.Read.MaxLogSize = 1 << 20
	tr2.Discover(0)
	// The saved state is kept until the re-read has passed the checkpoint.
	if s := tr2.Readers()[0].State(); s.Offset != st.Offset {
		t.Fatalf("state while re-reading: offset %d, want %d", s.Offset, st.Offset)
	}
	got := readAll(t, tr2, false)
	want := []string{strings.Repeat(chunk, 20) + "end", "after"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the restart: %d records %.80q", len(got), got)
	}
	if tr2.Stats.Lines != 2 {
		t.Fatalf("lines counted again: %d", tr2.Stats.Lines)
	}
}

// TestSmallUnfinishedEntryStaysInline: an unfinished entry up to InlineMax is kept in the
// checkpoint itself, so it survives the deletion of its file while the collector is down.
func TestSmallUnfinishedEntryStaysInline(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	writeFile(t, p, piece(1, "stdout", "P", "small"), false)
	tr := testTracker(t, root, nil, true, false)
	tr.Discover(0)
	readAll(t, tr, false)
	st := tr.Readers()[0].State()
	if st.Replay != nil || len(st.Joiner) < len("small") {
		t.Fatalf("state %+v", st)
	}
}

// TestUnfinishedContinuedRecordIsReReadAsContinued: with the klog preset, a record that reached
// max_log_size was emitted and its continuation opened a record flagged continued; that record,
// unfinished and over InlineMax at the checkpoint, is re-read after a restart and is still one
// record flagged continued.
func TestUnfinishedContinuedRecordIsReReadAsContinued(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	body := strings.Repeat("c", 990)
	var content strings.Builder
	content.WriteString(piece(0, "stderr", "F", "I0501 10:00:00.000000       1 start.go:1] record"))
	for i := 1; i <= 12; i++ { // six fill the first record (6,000 bytes), six continue it
		content.WriteString(piece(i, "stderr", "F", body))
	}
	writeFile(t, p, content.String(), false)
	newTracker := func(known []State, first bool) *Tracker {
		tr := testTracker(t, root, known, first, false)
		tr.cfg.Read.MaxLogSize = 6000
		tr.cfg.Read.IsStart = joiner.KlogStart
		return tr
	}
	tr := newTracker(nil, true)
	tr.Discover(0)
	if got := readAll(t, tr, false); len(got) != 1 {
		t.Fatalf("before the stop: %d records", len(got))
	}
	st := tr.Readers()[0].State()
	if st.Replay == nil || !st.ReplayContinued[1] {
		t.Fatalf("state: replay %v continued %v", st.Replay, st.ReplayContinued)
	}
	for _, r := range tr.Readers() {
		_ = r.Close()
	}
	dec, err := UnmarshalState(MarshalState(st))
	require(t, err)
	writeFile(t, p, piece(13, "stderr", "F", "I0501 10:00:01.000000       1 next.go:1] next"), true)
	tr2 := newTracker([]State{dec}, false)
	tr2.Discover(0)
	var flags []joiner.Flags
	var sizes []int
	for i := 0; i < 10; i++ {
		for _, r := range tr2.Readers() {
			_, _, err := r.Read(int64(i), tr2.Buffer(), false, func(rec *Record) {
				flags = append(flags, rec.Flags)
				sizes = append(sizes, len(rec.Body))
			})
			require(t, err)
		}
	}
	if len(flags) != 1 || flags[0]&joiner.Continued == 0 || sizes[0] != 6*990+5 {
		t.Fatalf("after the restart: flags %v sizes %v", flags, sizes)
	}
}
