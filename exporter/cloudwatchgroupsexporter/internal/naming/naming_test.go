// SPDX-License-Identifier: Apache-2.0

package naming

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestGroup(t *testing.T) {
	long := strings.Repeat("a", 600)
	tests := []struct {
		name       string
		in         string
		wantSame   bool
		wantPrefix string
	}{
		{name: "valid", in: "application", wantSame: true},
		{name: "all allowed characters", in: "a.b-c_d/e#F9", wantSame: true},
		{name: "max length", in: strings.Repeat("x", 512), wantSame: true},
		{name: "space", in: "my group", wantPrefix: "my_group#"},
		{name: "colon", in: "ns:x", wantPrefix: "ns_x#"},
		{name: "unicode", in: "grüße", wantPrefix: "gr__e#"},
		{name: "aws prefix", in: "aws/lambda", wantPrefix: "_aws/lambda#"},
		{name: "too long", in: long, wantPrefix: strings.Repeat("a", 499) + "#"},
		{name: "empty", in: "", wantPrefix: "#"},
		{name: "hash suffix kept when not hex", in: "a#0123456789az", wantSame: true},
		{name: "valid but shaped like a rewrite", in: "a#0123456789ab", wantPrefix: "a#0123456789ab#"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := Group(tt.in)
			if !ValidGroup(got) {
				t.Fatalf("Group(%q) = %q is not valid", tt.in, got)
			}
			if tt.wantSame {
				if changed || got != tt.in {
					t.Fatalf("Group(%q) = %q, %v; want unchanged", tt.in, got, changed)
				}
				return
			}
			if !changed {
				t.Fatalf("Group(%q) not marked changed", tt.in)
			}
			if !strings.HasPrefix(got, tt.wantPrefix) || len(got) != len(tt.wantPrefix)+hashLen {
				t.Fatalf("Group(%q) = %q; want prefix %q plus %d hash digits", tt.in, got, tt.wantPrefix, hashLen)
			}
			again, _ := Group(tt.in)
			if again != got {
				t.Fatalf("Group not stable: %q then %q", got, again)
			}
		})
	}
}

func TestStream(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantSame   bool
		wantPrefix string
	}{
		{name: "valid", in: "node-1.var.log.pods.ns_pod_uid.c.0.log", wantSame: true},
		{name: "unicode allowed", in: "nœud/ä", wantSame: true},
		{name: "colon and star", in: "a:b*c", wantPrefix: "a_b_c#"},
		{name: "invalid utf8", in: "a\xffb", wantPrefix: "a_b#"},
		{name: "too long multibyte", in: strings.Repeat("ä", 300), wantPrefix: strings.Repeat("ä", 249) + "#"},
		{name: "empty", in: "", wantPrefix: "#"},
		{name: "valid but shaped like a rewrite", in: "n/x#00000000000f", wantPrefix: "n/x#00000000000f#"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := Stream(tt.in)
			if !ValidStream(got) {
				t.Fatalf("Stream(%q) = %q is not valid", tt.in, got)
			}
			if tt.wantSame {
				if changed || got != tt.in {
					t.Fatalf("Stream(%q) = %q, %v; want unchanged", tt.in, got, changed)
				}
				return
			}
			if !changed || !strings.HasPrefix(got, tt.wantPrefix) || len(got) != len(tt.wantPrefix)+hashLen {
				t.Fatalf("Stream(%q) = %q, %v; want prefix %q plus hash", tt.in, got, changed, tt.wantPrefix)
			}
		})
	}
}

// Property: over generated names (valid ones, ones needing rewriting, ones shaped like a
// rewrite, names near the length limit, and the rewrites of other names), no two different
// inputs share an output, for groups and for streams.
func TestRewriteIsCollisionFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	alphabet := []string{"a", "b", ".", "-", "_", "/", "#", "0", "f", " ", ":", "*", "é", "\xff", "aws/"}
	var inputs []string
	for range 20000 {
		var b strings.Builder
		n := rng.IntN(12)
		if rng.IntN(10) == 0 {
			b.WriteString(strings.Repeat("x", 490+rng.IntN(30)))
		}
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	// Feed rewrites back in: a kept name equal to another name's rewrite must not exist.
	for _, in := range inputs[:2000] {
		g, _ := Group(in)
		st, _ := Stream(in)
		inputs = append(inputs, g, st, g+"x", strings.TrimSuffix(g, g[len(g)-1:])+"0")
	}
	for _, fn := range []struct {
		name string
		f    func(string) (string, bool)
	}{{"group", Group}, {"stream", Stream}} {
		seen := map[string]string{}
		for _, in := range inputs {
			got, _ := fn.f(in)
			if prev, ok := seen[got]; ok && prev != in {
				t.Fatalf("%s: %q and %q both map to %q", fn.name, prev, in, got)
			}
			seen[got] = in
		}
	}
}

func FuzzGroup(f *testing.F) {
	for _, s := range []string{"", "application", "aws/x", "a b", strings.Repeat("é", 400)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, changed := Group(in)
		if !ValidGroup(got) {
			t.Fatalf("Group(%q) = %q is invalid", in, got)
		}
		if changed == (got == in) {
			t.Fatalf("Group(%q) = %q, changed=%v inconsistent", in, got, changed)
		}
	})
}

func FuzzStream(f *testing.F) {
	for _, s := range []string{"", "node.var.log.x", "a:b", "\xff", strings.Repeat("ä", 400)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, changed := Stream(in)
		if !ValidStream(got) {
			t.Fatalf("Stream(%q) = %q is invalid", in, got)
		}
		if changed == (got == in) {
			t.Fatalf("Stream(%q) = %q, changed=%v inconsistent", in, got, changed)
		}
	})
}
