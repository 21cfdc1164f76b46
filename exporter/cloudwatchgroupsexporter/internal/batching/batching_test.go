// SPDX-License-Identifier: Apache-2.0

package batching

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func ms(d time.Duration) int64 { return now.Add(d).UnixMilli() }

func TestCutEscaped(t *testing.T) {
	tests := []struct {
		s        string
		n        int
		want     string
		wantSize int
	}{
		{`plain`, 3, `pla`, 3},
		{`a\"b`, 1, `a`, 1},
		{`a\"b`, 2, `a\"`, 2},
		{`\\\\`, 1, `\\`, 1},
		{`é\u00e9x`, 3, `é`, 2},
		{`é\u00e9x`, 4, `é\u00e9`, 4},
		{`\ud83d\ude00!`, 3, ``, 0},
		{`\ud83d\ude00!`, 4, `\ud83d\ude00`, 4},
		{`\ud83d!`, 3, `\ud83d`, 3}, // a lone surrogate stands for U+FFFD
		{`ab\`, 5, `ab\`, 3},        // an escape cut short counts as one byte
		{`中文`, 5, `中`, 3},
	}
	for _, tt := range tests {
		got, size := cutEscaped(tt.s, tt.n)
		if got != tt.want || size != tt.wantSize {
			t.Errorf("cutEscaped(%q, %d) = %q, %d; want %q, %d", tt.s, tt.n, got, size, tt.want, tt.wantSize)
		}
	}
}

func TestPrepare(t *testing.T) {
	big := strings.Repeat("é", 40) // 80 bytes
	tests := []struct {
		name     string
		in       []Event
		opts     Options
		wantMsgs []string
		want     Stats
	}{
		{
			name:     "sorted stable",
			in:       []Event{{Timestamp: ms(2 * time.Millisecond), Message: "c"}, {Timestamp: ms(time.Millisecond), Message: "a"}, {Timestamp: ms(time.Millisecond), Message: "b"}},
			wantMsgs: []string{"a", "b", "c"},
		},
		{
			name: "age limits",
			in: []Event{
				{Timestamp: ms(-MaxAge - time.Millisecond), Message: "old"},
				{Timestamp: ms(-MaxAge), Message: "oldest kept"},
				{Timestamp: ms(MaxAhead), Message: "newest kept"},
				{Timestamp: ms(MaxAhead + time.Millisecond), Message: "new"},
			},
			wantMsgs: []string{"oldest kept", "newest kept"},
			want:     Stats{TooOld: 1, TooNew: 1},
		},
		{
			name:     "retention shorter than 14 days",
			in:       []Event{{Timestamp: ms(-48 * time.Hour), Message: "old"}, {Timestamp: ms(-12 * time.Hour), Message: "ok"}},
			opts:     Options{MaxAge: 24 * time.Hour},
			wantMsgs: []string{"ok"},
			want:     Stats{TooOld: 1},
		},
		{
			name: "empty dropped",
			in:   []Event{{Timestamp: ms(0), Message: ""}},
			want: Stats{Empty: 1},
		},
		{
			name:     "truncate at rune boundary",
			in:       []Event{{Timestamp: ms(0), Message: big}},
			opts:     Options{MaxEventBytes: 21 + len(TruncationMarker)},
			wantMsgs: []string{strings.Repeat("é", 10) + TruncationMarker},
			want:     Stats{Truncated: 1},
		},
		{
			name: "split keeps pieces in order",
			in: []Event{
				{Timestamp: ms(time.Millisecond), Message: "after", Ref: 2},
				{Timestamp: ms(0), Message: "0123456789abc", Ref: 1},
				{Timestamp: ms(0), Message: "same time later", Ref: 3},
			},
			opts:     Options{MaxEventBytes: 5, Oversize: Split},
			wantMsgs: []string{"01234", "56789", "abc", "same ", "time ", "later", "after"},
			want:     Stats{Split: 2, SplitPieces: 4},
		},
		{
			// a"a"a"... escaped: 20 bytes as CloudWatch counts them, 30 as carried.
			name:     "truncate counts unescaped bytes and keeps escapes whole",
			in:       []Event{{Timestamp: ms(0), Message: strings.Repeat(`a\"`, 10), Unescaped: 20}},
			opts:     Options{MaxEventBytes: 3 + len(TruncationMarker)},
			wantMsgs: []string{`a\"a` + TruncationMarker},
			want:     Stats{Truncated: 1},
		},
		{
			name:     "escaped message within the limit is kept",
			in:       []Event{{Timestamp: ms(0), Message: `a\"b\"c\"d`, Unescaped: 7}},
			opts:     Options{MaxEventBytes: 7},
			wantMsgs: []string{`a\"b\"c\"d`},
		},
		{
			name:     "split at escape boundaries",
			in:       []Event{{Timestamp: ms(0), Message: `x\u0001y\nz`, Unescaped: 5}},
			opts:     Options{MaxEventBytes: 2, Oversize: Split},
			wantMsgs: []string{`x\u0001`, `y\n`, `z`},
			want:     Stats{Split: 1, SplitPieces: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := Prepare(tt.in, now, tt.opts)
			var msgs []string
			for _, e := range got {
				msgs = append(msgs, e.Message)
				var unescaped string
				if err := json.Unmarshal([]byte(`"`+e.Message+`"`), &unescaped); err != nil {
					t.Fatalf("%q is not the content of a JSON string: %v", e.Message, err)
				}
				if e.MessageSize() != len(unescaped) {
					t.Errorf("%q: size %d, want %d", e.Message, e.MessageSize(), len(unescaped))
				}
			}
			if strings.Join(msgs, "|") != strings.Join(tt.wantMsgs, "|") {
				t.Fatalf("messages = %q, want %q", msgs, tt.wantMsgs)
			}
			if st != tt.want {
				t.Fatalf("stats = %+v, want %+v", st, tt.want)
			}
		})
	}
}

func TestCut(t *testing.T) {
	fill := strings.Repeat("x", MaxEventBytes)
	tests := []struct {
		name  string
		in    []Event
		sizes []int // events per batch
	}{
		{name: "empty"},
		{name: "count limit", in: repeat(MaxEvents+1, 0, "a"), sizes: []int{MaxEvents, 1}},
		{name: "byte limit exact", in: []Event{{Message: fill}, {Message: "a"}}, sizes: []int{1, 1}},
		{
			name:  "byte limit sum",
			in:    repeat(3, 0, strings.Repeat("y", MaxBatchBytes/2-EventOverhead)),
			sizes: []int{2, 1},
		},
		{
			name: "span limit",
			in: []Event{
				{Timestamp: 0}, {Timestamp: MaxSpan.Milliseconds() - 1}, {Timestamp: MaxSpan.Milliseconds()},
			},
			sizes: []int{2, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cut(tt.in)
			if len(got) != len(tt.sizes) {
				t.Fatalf("%d batches, want %d", len(got), len(tt.sizes))
			}
			for i, b := range got {
				if len(b) != tt.sizes[i] {
					t.Fatalf("batch %d has %d events, want %d", i, len(b), tt.sizes[i])
				}
			}
		})
	}
}

func repeat(n int, ts int64, msg string) []Event {
	out := make([]Event, n)
	for i := range out {
		out[i] = Event{Timestamp: ts, Message: msg, Ref: i}
	}
	return out
}

// TestPropertyNoBatchBreaksARule feeds random streams through Prepare and Cut and checks every
// PutLogEvents rule on every batch, and that the batches hold every kept event once, in order.
func TestPropertyNoBatchBreaksARule(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		n := rng.IntN(3000)
		if iter%50 == 0 {
			n = 25_000
		}
		maxMsg := []int{10, 300, 5000, 400_000, 1_200_000}[rng.IntN(5)]
		if maxMsg > 5000 { // keep memory small: few large events
			n = min(n, 12)
		}
		events := make([]Event, n)
		for i := range events {
			offset := time.Duration(rng.Int64N(int64(16*24*time.Hour))) - 15*24*time.Hour
			if rng.IntN(4) == 0 { // clusters of equal and close timestamps
				offset = time.Duration(rng.IntN(1000)) * time.Millisecond
			}
			events[i] = Event{Timestamp: ms(offset), Message: randomMessage(rng, rng.IntN(maxMsg)), Ref: i}
		}
		opts := Options{Oversize: Oversize(rng.IntN(2)), MaxEventBytes: []int{0, 1000, 262_118}[rng.IntN(3)]}
		limit := opts.MaxEventBytes
		if limit == 0 {
			limit = MaxEventBytes
		}
		kept, st := Prepare(events, now, opts)
		batches := Cut(kept)

		total := 0
		var prev int64 = -1 << 62
		for bi, b := range batches {
			if len(b) == 0 || len(b) > MaxEvents {
				t.Fatalf("iter %d batch %d: %d events", iter, bi, len(b))
			}
			if Bytes(b) > MaxBatchBytes {
				t.Fatalf("iter %d batch %d: %d bytes", iter, bi, Bytes(b))
			}
			if span := b[len(b)-1].Timestamp - b[0].Timestamp; span >= MaxSpan.Milliseconds() {
				t.Fatalf("iter %d batch %d: span %d ms", iter, bi, span)
			}
			for _, e := range b {
				if e.Timestamp < prev {
					t.Fatalf("iter %d batch %d: not chronological", iter, bi)
				}
				prev = e.Timestamp
				if e.Timestamp < ms(-MaxAge) || e.Timestamp > ms(MaxAhead) {
					t.Fatalf("iter %d: event out of the accepted time range", iter)
				}
				if len(e.Message) == 0 || len(e.Message) > limit {
					t.Fatalf("iter %d: message of %d bytes, limit %d", iter, len(e.Message), limit)
				}
				if !utf8.ValidString(e.Message) {
					t.Fatalf("iter %d: message cut inside a rune", iter)
				}
			}
			total += len(b)
		}
		if total != len(kept) {
			t.Fatalf("iter %d: batches hold %d events, prepared %d", iter, total, len(kept))
		}
		if len(kept)-st.SplitPieces+st.TooOld+st.TooNew+st.Empty != n {
			t.Fatalf("iter %d: %d in, %d kept, stats %+v", iter, n, len(kept), st)
		}
		// Greedy cutting: every batch but the last could not take the next event.
		for bi := 0; bi+1 < len(batches); bi++ {
			b, next := batches[bi], batches[bi+1][0]
			if len(b) < MaxEvents && Bytes(b)+next.Size() <= MaxBatchBytes && next.Timestamp-b[0].Timestamp < MaxSpan.Milliseconds() {
				t.Fatalf("iter %d batch %d was cut early", iter, bi)
			}
		}
	}
}

func randomMessage(rng *rand.Rand, n int) string {
	if n == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(n)
	alphabet := []string{"a", "b", " ", "é", "中", "😀", "{", "\""}
	for b.Len() < n {
		if rng.IntN(8) == 0 {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		} else {
			b.WriteString("abcdefghij")
		}
	}
	return b.String()
}

func BenchmarkPrepareAndCut(b *testing.B) {
	msg := strings.Repeat("m", 200)
	src := make([]Event, 20_000)
	for i := range src {
		src[i] = Event{Timestamp: ms(time.Duration(i%500) * time.Millisecond), Message: msg, Ref: i}
	}
	buf := make([]Event, len(src))
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, src)
		kept, _ := Prepare(buf, now, Options{})
		_ = Cut(kept)
	}
}
