// SPDX-License-Identifier: Apache-2.0

package joiner

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusBlock is one expected outcome of a corpus file: a block after "-- one: <label>" is
// one record; every line of a block after "-- each: <label>" is a record of its own.
type corpusBlock struct {
	label string
	one   bool
	lines []string
}

// loadCorpus reads testdata/traces/<name>: the lines to feed, in order, and the records
// expected from them.
func loadCorpus(t testing.TB, name string) (lines, want []string, labels []string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "traces", name))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var blocks []*corpusBlock
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if rest, ok := strings.CutPrefix(l, "-- one: "); ok {
			blocks = append(blocks, &corpusBlock{label: rest, one: true})
			continue
		}
		if rest, ok := strings.CutPrefix(l, "-- each: "); ok {
			blocks = append(blocks, &corpusBlock{label: rest})
			continue
		}
		if len(blocks) == 0 {
			t.Fatalf("%s: line %q before the first block", name, l)
		}
		b := blocks[len(blocks)-1]
		b.lines = append(b.lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		lines = append(lines, b.lines...)
		if b.one {
			if len(b.lines) < 2 || b.lines[len(b.lines)-1] == "" {
				t.Fatalf("%s: block %q: a trace of at least two lines, not ending in a blank line", name, b.label)
			}
			want = append(want, strings.Join(b.lines, "\n"))
			labels = append(labels, b.label)
			continue
		}
		for _, l := range b.lines {
			want = append(want, l)
			labels = append(labels, b.label)
		}
	}
	return lines, want, labels
}

var corpusFiles = []string{"java.txt", "python.txt", "go.txt", "node.txt", "ruby.txt", "ordinary.txt"}

// TestTraceCorpus feeds each corpus file to the stack-trace rules, on both streams at once,
// interleaved line by line, and requires exactly the corpus's records on each stream: every
// trace one record, every ordinary line a record of its own.
func TestTraceCorpus(t *testing.T) {
	for _, name := range corpusFiles {
		t.Run(name, func(t *testing.T) {
			lines, want, labels := loadCorpus(t, name)
			j := New(Config{MaxLogSize: 1 << 20, Traces: true})
			got := [2][]string{}
			pieces := [2]int{}
			emit := func(e *Entry) {
				got[e.Stream] = append(got[e.Stream], string(e.Content))
				pieces[e.Stream] += e.Pieces
				if e.Flags != 0 {
					t.Errorf("record %q flagged %v", e.Content, e.Flags)
				}
			}
			for i, l := range lines {
				j.Add(0, int64(i), false, []byte("F"), []byte(l), int64(i), emit)
				// The other stream writes the same lines in reverse order: never mixed in.
				j.Add(1, int64(i), false, []byte("F"), []byte(lines[len(lines)-1-i]), int64(i), emit)
			}
			j.Flush(int64(len(lines)), -1, -1, emit)
			if j.Pending() {
				t.Fatal("pending after a final flush")
			}
			for s := range 2 {
				if pieces[s] != len(lines) {
					t.Errorf("stream %d: %d lines in records, %d fed", s, pieces[s], len(lines))
				}
			}
			for i := 0; i < len(want) || i < len(got[0]); i++ {
				var g, w, label string
				if i < len(got[0]) {
					g = got[0][i]
				}
				if i < len(want) {
					w, label = want[i], labels[i]
				}
				if g != w {
					t.Fatalf("record %d (%s):\ngot  %q\nwant %q", i, label, g, w)
				}
			}
			// Stream 1 got the lines reversed: its records must be the reversed lines
			// recombined by the same rules, and never contain a line of stream 0 only.
			if strings.Join(got[1], "\n") != reverseJoin(lines) {
				t.Errorf("stream 1 lost or reordered bytes")
			}
		})
	}
}

func reverseJoin(lines []string) string {
	r := make([]string, len(lines))
	for i, l := range lines {
		r[len(lines)-1-i] = l
	}
	return strings.Join(r, "\n")
}

// TestTracesWithKlog: preset auto: klog records keep their continuation lines, a goroutine
// dump continues the klog line that announced it, a panic ends a klog record, and stack traces
// of other containers' shapes still join.
func TestTracesWithKlog(t *testing.T) {
	lines := []string{
		`I0310 12:00:00.000000       1 server.go:12] "Config" value=<`,
		"\tline one",
		" >",
		`E0310 12:00:01.000000       1 runtime.go:78] Observed a panic: "invalid memory address or nil pointer dereference"`,
		"goroutine 207643 [running]:",
		"k8s.io/apimachinery/pkg/util/runtime.logPanic({0x4221200, 0x761c740})",
		"\t/go/src/k8s.io/apimachinery/pkg/util/runtime/runtime.go:74 +0x99",
		`I0310 12:00:02.000000       1 main.go:40] "Shutting down"`,
		"panic: close of closed channel",
		"",
		"goroutine 1 [running]:",
		"main.main()",
		"\t/app/main.go:9 +0x34",
		`{"level":"info","msg":"plain JSON"}`,
		"Error: boom",
		"    at main (/app/index.js:3:9)",
	}
	want := []string{
		strings.Join(lines[0:3], "\n"),
		strings.Join(lines[3:7], "\n"),
		lines[7],
		strings.Join(lines[8:13], "\n"),
		lines[13],
		strings.Join(lines[14:16], "\n"),
	}
	j := New(Config{MaxLogSize: 1 << 20, IsStart: KlogStart, Traces: true})
	var got []string
	emit := func(e *Entry) { got = append(got, string(e.Content)) }
	for i, l := range lines {
		j.Add(1, int64(i), false, nil, []byte(l), int64(i), emit)
	}
	j.Flush(0, -1, -1, emit)
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// TestTraceHoldAndFlush: a held line is emitted by the flush timeout once idle, and a trace's
// tentative blank line, unconfirmed at the timeout, comes out as a record of its own after it.
func TestTraceHoldAndFlush(t *testing.T) {
	j := New(Config{MaxLogSize: 1 << 20, Traces: true})
	var got []string
	emit := func(e *Entry) { got = append(got, string(e.Content)) }
	j.Add(0, 1, false, nil, []byte("Error: boom"), 100, emit)
	j.Flush(150, -1, 100, emit)
	if len(got) != 0 {
		t.Fatalf("flushed before the timeout: %q", got)
	}
	j.Flush(200, -1, 100, emit)
	if len(got) != 1 || got[0] != "Error: boom" {
		t.Fatalf("held line after the timeout: %q", got)
	}
	for i, l := range []string{"panic: x", "", "goroutine 1 [running]:", "main.main()", ""} {
		j.Add(0, int64(i), false, nil, []byte(l), 300, emit)
	}
	j.Flush(400, -1, 100, emit)
	want := []string{"Error: boom", "panic: x\n\ngoroutine 1 [running]:\nmain.main()", ""}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) || j.Pending() {
		t.Fatalf("got %q (pending %v), want %q", got, j.Pending(), want)
	}
}

// TestTraceStateSurvivesSave: the phase and a tentative blank line are in the saved state, so
// a trace read across a checkpoint restore is joined as if read at once.
func TestTraceStateSurvivesSave(t *testing.T) {
	lines := []string{"panic: x", "", "goroutine 1 [running]:", "main.main()", "\t/app/main.go:9 +0x34", "after"}
	for cut := 1; cut < len(lines); cut++ {
		j := New(Config{MaxLogSize: 1 << 20, Traces: true})
		var got []string
		emit := func(e *Entry) { got = append(got, string(e.Content)) }
		for i, l := range lines[:cut] {
			j.Add(0, int64(i), false, nil, []byte(l), 0, emit)
		}
		k := New(Config{MaxLogSize: 1 << 20, Traces: true})
		if err := k.LoadState(j.AppendState(nil)); err != nil {
			t.Fatal(err)
		}
		for i, l := range lines[cut:] {
			k.Add(0, int64(cut+i), false, nil, []byte(l), 0, emit)
		}
		k.Flush(0, -1, -1, emit)
		want := []string{strings.Join(lines[:5], "\n"), "after"}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("cut at %d: got %q", cut, got)
		}
	}
	// A version 1 state (no phase) still loads.
	if err := New(Config{Traces: true}).LoadState([]byte{1, 0, 0, 0, 0}); err != nil {
		t.Errorf("version 1: %v", err)
	}
}

// TestTraceAtTheLimit: a trace longer than max_log_size is split at a line, never cut, and
// the continuation keeps joining the trace's lines.
func TestTraceAtTheLimit(t *testing.T) {
	j := New(Config{MaxLogSize: 80, Traces: true})
	var got []string
	var flags []Flags
	emit := func(e *Entry) { got = append(got, string(e.Content)); flags = append(flags, e.Flags) }
	lines := []string{"java.lang.IllegalStateException: boom"}
	for i := range 6 {
		lines = append(lines, fmt.Sprintf("\tat com.example.C.m%d(C.java:%d)", i, i+10))
	}
	lines = append(lines, "next")
	for i, l := range lines {
		j.Add(0, int64(i), false, nil, []byte(l), 0, emit)
	}
	j.Flush(0, -1, -1, emit)
	if strings.Join(got, "\n") != strings.Join(lines, "\n") || got[len(got)-1] != "next" || len(got) < 3 {
		t.Fatalf("got %q", got)
	}
	for i, g := range got[:len(got)-1] {
		if len(g) > 80 || (i > 0) != (flags[i]&Continued != 0) {
			t.Errorf("record %d %q flags %v", i, g, flags[i])
		}
	}
}

// FuzzTraceJoining: whatever the lines, the records of a stream, joined with line breaks, are
// exactly its lines in order: joining never loses, adds or reorders a byte, across flushes and
// saved-and-restored states, with and without klog.
func FuzzTraceJoining(f *testing.F) {
	for _, name := range corpusFiles {
		lines, _, _ := loadCorpus(f, name)
		f.Add(strings.Join(lines, "\n"), uint64(0x9e3779b97f4a7c15), true)
	}
	f.Add("a\n\nb\n\tat x.Y(Z.java:1)\n\n\npanic: p\n\ngoroutine 1 [running]:\n", uint64(12345), false)
	f.Fuzz(func(t *testing.T, text string, seed uint64, klog bool) {
		text = strings.ToValidUTF8(text, "?")
		const max = 200
		cfg := Config{MaxLogSize: max, Traces: true}
		if klog {
			cfg.IsStart = KlogStart
		}
		j := New(cfg)
		var got, want [2][]string
		emit := func(e *Entry) { got[e.Stream] = append(got[e.Stream], string(e.Content)) }
		rnd := seed | 1
		next := func() uint64 { rnd ^= rnd << 13; rnd ^= rnd >> 7; rnd ^= rnd << 17; return rnd }
		now := int64(0)
		for _, l := range strings.Split(text, "\n") {
			for len(l) > max { // longer lines are truncated by design (flagged): not this test's subject
				l = strings.ToValidUTF8(l[:max], "")
			}
			r := next()
			s := int(r & 1)
			want[s] = append(want[s], l)
			now += int64(r >> 60)
			j.Add(s, now, false, nil, []byte(l), now, emit)
			switch (r >> 8) & 15 {
			case 0:
				j.Flush(now, -1, 3, emit)
			case 1:
				k := New(cfg)
				if err := k.LoadState(j.AppendState(nil)); err != nil {
					t.Fatal(err)
				}
				j = k
			}
		}
		j.Flush(now, -1, -1, emit)
		for s := range 2 {
			if g, w := strings.Join(got[s], "\n"), strings.Join(want[s], "\n"); g != w || len(got[s]) > len(want[s]) {
				t.Fatalf("stream %d:\ngot  %q\nwant %q", s, got[s], want[s])
			}
		}
	})
}

// BenchmarkMultilineModes is the CPU cost per line of each multi-line mode, on ordinary lines
// only (the common case: JSON and klog lines, no trace) and on the trace corpus (every trace
// shape and the ordinary lines between them). One op is one line.
func BenchmarkMultilineModes(b *testing.B) {
	var corpus []string
	for _, name := range corpusFiles {
		lines, _, _ := loadCorpus(b, name)
		corpus = append(corpus, lines...)
	}
	plain := []string{
		`{"level":"info","ts":1700000000.123,"caller":"server/handler.go:42","msg":"request served","method":"GET","path":"/api/v1/items/42","status":200,"latency":"1.2ms"}`,
		`I0310 12:00:00.000000       1 controller.go:116] "Pod status updated" pod="kube-system/kubedns" status="ready"`,
		`2026-03-10 12:00:02.000  INFO 1 --- [main] c.e.shop.Application : Started Application in 4.2 seconds`,
		`10.0.0.7 - - [10/Mar/2026:12:00:00 +0000] "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/1.30"`,
	}
	modes := []struct {
		name string
		cfg  Config
	}{
		{"off", Config{MaxLogSize: 1 << 20}},
		{"klog", Config{MaxLogSize: 1 << 20, IsStart: KlogStart}},
		{"stacktraces", Config{MaxLogSize: 1 << 20, Traces: true}},
		{"auto", Config{MaxLogSize: 1 << 20, IsStart: KlogStart, Traces: true}},
	}
	for _, set := range []struct {
		name  string
		lines []string
	}{{"plain", plain}, {"corpus", corpus}} {
		lines := make([][]byte, len(set.lines))
		size := 0
		for i, l := range set.lines {
			lines[i] = []byte(l)
			size += len(l)
		}
		for _, m := range modes {
			b.Run(set.name+"/"+m.name, func(b *testing.B) {
				j := New(m.cfg)
				emit := func(*Entry) {}
				b.SetBytes(int64(size / len(lines)))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					j.Add(0, 1, false, nil, lines[i], 1, emit)
					if i++; i == len(lines) {
						i = 0
					}
				}
			})
		}
	}
}
