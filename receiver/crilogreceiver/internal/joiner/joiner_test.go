// SPDX-License-Identifier: Apache-2.0

package joiner

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

type piece struct {
	stream  int
	partial bool
	content string
	now     int64
}

type got struct {
	stream  int
	time    int64
	content string
	flags   Flags
	pieces  int
	dropped int
}

func run(j *Joiner, pieces []piece) []got {
	var out []got
	emit := func(e *Entry) {
		out = append(out, got{e.Stream, e.Time, string(e.Content), e.Flags, e.Pieces, e.Dropped})
	}
	for i, p := range pieces {
		j.Add(p.stream, int64(i+1), p.partial, nil, []byte(p.content), p.now, emit)
	}
	return out
}

func TestJoin(t *testing.T) {
	const max = 10
	tests := []struct {
		name   string
		pieces []piece
		want   []got
	}{
		{
			"full lines pass through",
			[]piece{{0, false, "a", 0}, {1, false, "b", 0}},
			[]got{{0, 1, "a", 0, 1, 0}, {1, 2, "b", 0, 1, 0}},
		},
		{
			"partials joined byte exact",
			[]piece{{0, true, " a ", 0}, {0, true, "", 0}, {0, false, "b ", 0}},
			[]got{{0, 1, " a b ", 0, 3, 0}},
		},
		{
			"streams interleave",
			[]piece{{0, true, "o1", 0}, {1, true, "e1", 0}, {0, false, "o2", 0}, {1, true, "e2", 0}, {1, false, "e3", 0}},
			[]got{{0, 1, "o1o2", 0, 2, 0}, {1, 2, "e1e2e3", 0, 3, 0}},
		},
		{
			"long full line truncated",
			[]piece{{0, false, "0123456789abc", 0}},
			[]got{{0, 1, "0123456789", Truncated, 1, 3}},
		},
		{
			"long joined entry truncated",
			[]piece{{0, true, "012345", 0}, {0, true, "6789ab", 0}, {0, false, "cd", 0}, {0, false, "next", 0}},
			[]got{{0, 1, "0123456789", Truncated, 3, 4}, {0, 4, "next", 0, 1, 0}},
		},
		{
			"cut character not left behind",
			[]piece{{0, true, "123456789", 0}, {0, false, "é", 0}},
			[]got{{0, 1, "123456789", Truncated, 2, 2}},
		},
		{
			"character split across pieces is whole",
			[]piece{{0, true, "a\xc3", 0}, {0, false, "\xa9b", 0}},
			[]got{{0, 1, "aéb", 0, 2, 0}},
		},
		{
			"invalid bytes replaced one by one",
			[]piece{{0, false, "a\xff\xfeb", 0}},
			[]got{{0, 1, "a\uFFFD\uFFFDb", InvalidUTF8, 1, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(New(Config{MaxLogSize: max}), tt.pieces)
			if fmt.Sprint(out) != fmt.Sprint(tt.want) {
				t.Fatalf("got  %v\nwant %v", out, tt.want)
			}
		})
	}
}

func TestFlushTimeout(t *testing.T) {
	j := New(Config{MaxLogSize: 100})
	var out []got
	emit := func(e *Entry) {
		out = append(out, got{e.Stream, e.Time, string(e.Content), e.Flags, e.Pieces, e.Dropped})
	}
	j.Add(1, 7, true, nil, []byte("half"), 1000, emit)
	j.Flush(1500, 1000, 1000, emit)
	if len(out) != 0 || !j.Pending() {
		t.Fatalf("flushed too early: %v", out)
	}
	j.Flush(2000, 1000, 1000, emit)
	if want := []got{{1, 7, "half", Flushed, 1, 0}}; fmt.Sprint(out) != fmt.Sprint(want) || j.Pending() {
		t.Fatalf("got %v want %v", out, want)
	}
}

func TestMultiline(t *testing.T) {
	j := New(Config{MaxLogSize: 60, IsStart: KlogStart})
	pieces := []piece{
		{0, false, "I0501 10:11:12.123456 1 a.go:1] start", 0},
		{0, false, "  continued value", 0},
		{1, false, "E0501 10:11:12.123456 1 b.go:2] other stream", 0},
		{0, true, "  and a par", 0},
		{0, false, "tial one", 0},
		{0, false, "W0501 10:11:13.000000 1 a.go:3] next", 0},
	}
	out := run(j, pieces)
	// The partial entry does not fit beside the record (60 bytes): the record is emitted whole and
	// the entry continues it in a record of its own.
	want := []got{
		{0, 1, "I0501 10:11:12.123456 1 a.go:1] start\n  continued value", 0, 2, 0},
		{0, 4, "  and a partial one", Continued, 2, 0},
	}
	if fmt.Sprint(out) != fmt.Sprint(want) {
		t.Fatalf("got  %v\nwant %v", out, want)
	}
	out = nil
	j.Flush(0, -1, -1, func(e *Entry) {
		out = append(out, got{e.Stream, e.Time, string(e.Content), e.Flags, e.Pieces, e.Dropped})
	})
	want = []got{{0, 6, "W0501 10:11:13.000000 1 a.go:3] next", 0, 1, 0}, {1, 3, "E0501 10:11:12.123456 1 b.go:2] other stream", 0, 1, 0}}
	if fmt.Sprint(out) != fmt.Sprint(want) {
		t.Fatalf("got  %v\nwant %v", out, want)
	}
}

func TestKlogStart(t *testing.T) {
	for s, want := range map[string]bool{
		"I0501 10:11:12.123456 1 a.go:1] x":  true,
		"F1231 23:59:59.999999 12345 x] y":   true,
		"X0501 10:11:12.123456 1 a.go:1] x":  false,
		"I0501 10:11:12.12345 1 a.go:1] x":   false,
		"  at com.example.Foo(Foo.java:12)":  false,
		"I0501 10:11:12.123456":              false,
		"I0501T10:11:12.123456 1 a.go:1] xx": false,
	} {
		if KlogStart([]byte(s)) != want {
			t.Errorf("%q: want %v", s, want)
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	j := New(Config{MaxLogSize: 100, IsStart: KlogStart})
	emit := func(*Entry) {}
	j.Add(0, 5, true, []byte("x:y"), []byte("abc"), 10, emit)
	j.Add(1, 6, false, nil, []byte("I0501 10:11:12.123456 1 a.go:1] m"), 11, emit)
	state := j.AppendState(nil)
	k := New(Config{MaxLogSize: 100, IsStart: KlogStart})
	if err := k.LoadState(state); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k.AppendState(nil), state) {
		t.Fatal("state changed in a round trip")
	}
	var out []string
	k.Add(0, 7, false, nil, []byte("def"), 12, func(e *Entry) { out = append(out, string(e.Tags)+"|"+string(e.Content)) })
	k.Flush(0, -1, -1, func(e *Entry) { out = append(out, string(e.Tags)+"|"+string(e.Content)) })
	if want := "[x:y|abcdef |I0501 10:11:12.123456 1 a.go:1] m]"; fmt.Sprint(out) != want {
		t.Fatalf("got %v", out)
	}
	for i := 0; i < len(state); i++ {
		_ = New(Config{MaxLogSize: 100}).LoadState(state[:i]) // must not panic
	}
}

// TestRelease: a joiner holds per-stream state only while a stream has an unfinished entry and
// until Release; releasing never loses an unfinished entry, and the saved state does not
// depend on whether a stream's state is allocated.
func TestRelease(t *testing.T) {
	klog := func(m string) string { return "I0501 10:11:12.123456 1 a.go:1] " + m }
	tests := []struct {
		name    string
		isStart func([]byte) bool
		before  []piece // fed, then Release
		after   []piece // fed after Release, then everything flushed
		held    [2]bool // stream state still allocated after Release
		want    []string
	}{
		{name: "whole lines only", before: []piece{{content: "a"}, {stream: 1, content: "b"}}, want: []string{"a", "b"}},
		{
			name: "finished partial", before: []piece{{partial: true, content: "a"}, {content: "b"}},
			after: []piece{{content: "c"}}, want: []string{"ab", "c"},
		},
		{
			name: "unfinished partial kept", before: []piece{{stream: 1, partial: true, content: "a"}},
			after: []piece{{stream: 1, content: "b"}}, held: [2]bool{false, true}, want: []string{"ab"},
		},
		{
			name: "open multi-line record kept", isStart: KlogStart, before: []piece{{content: klog("x")}, {content: "  at y"}},
			after: []piece{{content: "  at z"}, {content: klog("w")}}, held: [2]bool{true, false},
			want: []string{klog("x") + "\n  at y\n  at z", klog("w")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := New(Config{MaxLogSize: 100, IsStart: tt.isStart})
			fresh := j.AppendState(nil)
			var out []string
			emit := func(e *Entry) { out = append(out, string(e.Content)) }
			for _, p := range tt.before {
				j.Add(p.stream, 1, p.partial, nil, []byte(p.content), 1, emit)
			}
			saved := j.AppendState(nil)
			j.Release()
			for i, held := range tt.held {
				if (j.s[i] != nil) != held {
					t.Errorf("stream %d state held %v, want %v", i, j.s[i] != nil, held)
				}
			}
			if !bytes.Equal(j.AppendState(nil), saved) {
				t.Errorf("Release changed the saved state: %x, was %x", j.AppendState(nil), saved)
			}
			if tt.held == [2]bool{} && !bytes.Equal(saved, fresh) {
				t.Errorf("state with nothing pending %x, want a fresh joiner's %x", saved, fresh)
			}
			for _, p := range tt.after {
				j.Add(p.stream, 1, p.partial, nil, []byte(p.content), 1, emit)
			}
			j.Flush(1, -1, -1, emit)
			if fmt.Sprint(out) != fmt.Sprint(tt.want) {
				t.Fatalf("got %q, want %q", out, tt.want)
			}
		})
	}
}

// TestWholeLinesHoldNoStreamState: a file that only gets whole lines (no multi-line
// recombination) never allocates per-stream state, and adding a line allocates nothing.
func TestWholeLinesHoldNoStreamState(t *testing.T) {
	j := New(Config{MaxLogSize: 100})
	emit := func(*Entry) {}
	a, b := []byte("a line"), []byte("another")
	allocs := testing.AllocsPerRun(100, func() {
		j.Add(0, 1, false, nil, a, 1, emit)
		j.Add(1, 1, false, nil, b, 1, emit)
	})
	if allocs != 0 || j.s != [2]*stream{} {
		t.Fatalf("%v allocations per line pair, stream state %v: want none", allocs, j.s)
	}
}

// FuzzJoin drives the joiner with arbitrary pieces and checks its invariants: every entry is
// valid UTF-8 and within the size limit, per stream the output is the input's entries in order,
// and for valid UTF-8 input without truncation the content is byte-exact.
func FuzzJoin(f *testing.F) {
	f.Add([]byte("\x01ab\x00cd\x03e\x02f"), 8)
	f.Add([]byte("\x01\xc3\x00\xa9"), 100)
	f.Add([]byte("\x03ab\x04cd\x07e\x06f\x00g"), 8)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max <= 0 || max > 1<<16 {
			max = 16
		}
		j := New(Config{MaxLogSize: max})
		var want [2][]string
		var cur [2]strings.Builder
		var out [2][]string
		var open [2]bool
		truncated := false
		emit := func(e *Entry) {
			if !utf8.Valid(e.Content) || len(e.Content) > max {
				t.Fatalf("bad entry %q (max %d)", e.Content, max)
			}
			truncated = truncated || e.Flags&(Truncated|InvalidUTF8) != 0
			out[e.Stream] = append(out[e.Stream], string(e.Content))
		}
		// Control bytes 0-7 start a piece: bit 0 stream, bit 1 partial, bit 2 Release first
		// (which must never lose an unfinished entry).
		for len(data) > 0 {
			ctl := data[0]
			data = data[1:]
			if ctl&4 != 0 {
				j.Release()
			}
			end := bytes.IndexFunc(data, func(r rune) bool { return r < 8 })
			if end < 0 {
				end = len(data)
			}
			content := data[:end]
			data = data[end:]
			s, partial := int(ctl&1), ctl&2 != 0
			cur[s].Write(content)
			open[s] = partial
			if !partial {
				want[s] = append(want[s], cur[s].String())
				cur[s].Reset()
			}
			j.Add(s, 0, partial, nil, content, 0, emit)
		}
		j.Flush(0, -1, -1, emit)
		for s := range 2 {
			if open[s] {
				want[s] = append(want[s], cur[s].String())
			}
			if len(out[s]) != len(want[s]) {
				t.Fatalf("stream %d: %d entries, want %d", s, len(out[s]), len(want[s]))
			}
			if !truncated && fmt.Sprint(out[s]) != fmt.Sprint(want[s]) {
				t.Fatalf("stream %d: got %q want %q", s, out[s], want[s])
			}
		}
	})
}

func BenchmarkJoinFull(b *testing.B) {
	j := New(Config{MaxLogSize: 1 << 20})
	line := []byte(`I0501 10:11:12.123456 1 controller.go:123] "Reconciled object" object="default/my-deployment-7c9d8f"`)
	emit := func(*Entry) {}
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		j.Add(0, 1, false, nil, line, 1, emit)
	}
}

func BenchmarkJoinPartial(b *testing.B) {
	j := New(Config{MaxLogSize: 1 << 20})
	line := []byte(`I0501 10:11:12.123456 1 controller.go:123] "Reconciled object" object="default/my-deployment-7c9d8f"`)
	emit := func(*Entry) {}
	b.SetBytes(int64(2 * len(line)))
	for b.Loop() {
		j.Add(0, 1, true, nil, line, 1, emit)
		j.Add(0, 1, false, nil, line, 1, emit)
	}
}

// FuzzJoinMultiline checks the invariants that hold with multi-line recombination: entries are
// valid UTF-8 within the limit, and no input byte of valid UTF-8 input without truncation is
// lost (the output is the input's entries joined with newlines).
func FuzzJoinMultiline(f *testing.F) {
	f.Add([]byte("\x00Sfirst\x00cont\x02par\x00tial\x01Sother\x00Snext"), 32)
	f.Add([]byte("\x00Sfirst\x04cont\x06par\x04tial\x05Sother\x04Snext"), 32)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max <= 0 || max > 1<<16 {
			max = 32
		}
		isStart := func(b []byte) bool { return len(b) > 0 && b[0] == 'S' }
		j := New(Config{MaxLogSize: max, IsStart: isStart})
		var in, out [2]int
		lossy := false
		emit := func(e *Entry) {
			if !utf8.Valid(e.Content) || len(e.Content) > max {
				t.Fatalf("bad entry %q (max %d)", e.Content, max)
			}
			lossy = lossy || e.Flags&(Truncated|InvalidUTF8) != 0
			out[e.Stream] += len(e.Content) + 1
		}
		// Control bytes 0-7 start a piece: bit 0 stream, bit 1 partial, bit 2 Release first.
		for len(data) > 0 {
			ctl := data[0]
			data = data[1:]
			if ctl&4 != 0 {
				j.Release()
			}
			end := bytes.IndexFunc(data, func(r rune) bool { return r < 8 })
			if end < 0 {
				end = len(data)
			}
			content := data[:end]
			data = data[end:]
			s := int(ctl & 1)
			in[s] += len(content)
			j.Add(s, 0, ctl&2 != 0, nil, content, 0, emit)
		}
		j.Flush(0, -1, -1, emit)
		for s := range 2 {
			// Each output entry adds one separator of its own; joined lines add one each.
			if !lossy && out[s] < in[s] {
				t.Fatalf("stream %d: %d bytes out for %d in", s, out[s], in[s])
			}
		}
	})
}
