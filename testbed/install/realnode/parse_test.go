// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// regexLoggen is what countStored did with the patterns: endRE first, then lineRE.
func regexLoggen(msg string) (loggenLine, bool) {
	if m := endRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[3])
		return loggenLine{id: m[1], stream: m[2], seq: n, end: true}, true
	}
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[3])
		return loggenLine{id: m[1], stream: m[2], seq: n}, true
	}
	return loggenLine{}, false
}

func TestParseLoggen(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want loggenLine
		ok   bool
	}{
		{"throughput-0 stdout 12 xxxx", loggenLine{"throughput-0", "stdout", 12, false}, true},
		{`{"body":"steady-1 stderr 7 ","attributes":{"log.iostream":"stderr"}}`, loggenLine{"steady-1", "stderr", 7, false}, true},
		{`{"body":"steady-1 stdout end 300"}`, loggenLine{"steady-1", "stdout", 300, true}, true},
		{"a stdout 1 then b stderr end 9", loggenLine{"b", "stderr", 9, true}, true},
		{"Xab stdout 1 ", loggenLine{}, false}, // an id is not preceded by a word byte
		{"-ab stdout 1 ", loggenLine{}, false}, // nor starts with '-'
		{"ab stdout 1", loggenLine{}, false},   // the number ends with a space
		{"ab stdout x 1 ab stdout 2 ", loggenLine{"ab", "stdout", 2, false}, true},
		{" stdout 1 ", loggenLine{}, false}, // no id
		{"ab stdoutt 1 ", loggenLine{}, false},
		{"", loggenLine{}, false},
	} {
		got, ok := parseLoggen(tc.msg)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseLoggen(%q) = %+v, %v; want %+v, %v", tc.msg, got, ok, tc.want, tc.ok)
		}
		if rgot, rok := regexLoggen(tc.msg); rok != ok || rgot != got {
			t.Errorf("patterns on %q: %+v, %v; parser %+v, %v", tc.msg, rgot, rok, got, ok)
		}
	}
}

// TestParseLoggenAgainstPatterns compares the parser with the patterns on generated messages
// made of the pieces that matter (ids, streams, "end", numbers, word bytes, quotes), so that it
// runs with the ordinary tests (FuzzParseLoggen explores further).
func TestParseLoggenAgainstPatterns(t *testing.T) {
	pieces := []string{"a", "b-1", "-", "X", "0", "42", " ", " ", "stdout", "stderr", "std", "end", `"`, "x", "\n", "é"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		msg := b.String()
		got, ok := parseLoggen(msg)
		want, wok := regexLoggen(msg)
		if ok != wok || got != want {
			t.Fatalf("parseLoggen(%q) = %+v, %v; the patterns find %+v, %v", msg, got, ok, want, wok)
		}
	}
}

// FuzzParseLoggen checks the parser against the patterns it replaces.
func FuzzParseLoggen(f *testing.F) {
	for _, s := range []string{"throughput-0 stdout 12 xxxx", `"a-1 stderr end 5"`, "x\"b stdout 1 c stdout end 2", "Ab stdout 1 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		got, ok := parseLoggen(msg)
		want, wok := regexLoggen(msg)
		if ok != wok || got != want {
			t.Fatalf("parseLoggen(%q) = %+v, %v; the patterns find %+v, %v", msg, got, ok, want, wok)
		}
	})
}
