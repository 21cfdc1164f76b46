// SPDX-License-Identifier: Apache-2.0

package joiner

import (
	"fmt"
	"strings"
	"testing"
)

// TestMultilineLeavesOtherEntriesAlone: with the klog preset on, a container that never writes a
// klog header (JSON logs) gets one record per entry at once, and nothing is held pending: no
// record opens on an entry that is not a start.
func TestMultilineLeavesOtherEntriesAlone(t *testing.T) {
	j := New(Config{MaxLogSize: 1024, IsStart: KlogStart})
	var out []string
	emit := func(e *Entry) { out = append(out, string(e.Content)) }
	for i := range 2000 {
		j.Add(0, int64(i), false, nil, []byte(fmt.Sprintf(`{"level":"info","msg":"request %d"}`, i)), int64(i), emit)
		if len(out) != i+1 {
			t.Fatalf("after %d JSON entries %d records were emitted (pending: %v)", i+1, len(out), j.Pending())
		}
	}
	if j.Pending() {
		t.Fatal("a non-start entry is held pending")
	}
	if out[1999] != `{"level":"info","msg":"request 1999"}` {
		t.Fatalf("last record %q", out[1999])
	}
}

// TestMultilineAtTheLimit: a record that reaches max_log_size is emitted whole and continued in
// a new record flagged Continued; no byte is cut.
func TestMultilineAtTheLimit(t *testing.T) {
	const limit = 64
	head := "I0501 10:11:12.123456 1 a.go:1] start" // 37 bytes
	tests := []struct {
		name   string
		pieces []string
		want   []got
	}{
		{
			name:   "fits",
			pieces: []string{head, "  0123456789", "  abcdefghi"},
			want:   []got{{0, 1, head + "\n  0123456789\n  abcdefghi", 0, 3, 0}},
		},
		{
			name:   "continued",
			pieces: []string{head, "  0123456789", "  abcdefghijklmn", "  op"},
			want: []got{
				{0, 1, head + "\n  0123456789", 0, 2, 0},
				{0, 3, "  abcdefghijklmn\n  op", Continued, 2, 0},
			},
		},
		{
			name:   "a start ends a continued record",
			pieces: []string{head, strings.Repeat("x", 30), strings.Repeat("y", 40), head},
			want: []got{
				{0, 1, head, 0, 1, 0},
				{0, 2, strings.Repeat("x", 30), Continued, 1, 0},
				{0, 3, strings.Repeat("y", 40), Continued, 1, 0},
				{0, 4, head, 0, 1, 0},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := New(Config{MaxLogSize: limit, IsStart: KlogStart})
			var ps []piece
			for _, c := range tc.pieces {
				ps = append(ps, piece{0, false, c, 0})
			}
			out := run(j, ps)
			j.Flush(0, -1, -1, func(e *Entry) {
				out = append(out, got{e.Stream, e.Time, string(e.Content), e.Flags, e.Pieces, e.Dropped})
			})
			if fmt.Sprint(out) != fmt.Sprint(tc.want) {
				t.Fatalf("got  %v\nwant %v", out, tc.want)
			}
		})
	}
}
