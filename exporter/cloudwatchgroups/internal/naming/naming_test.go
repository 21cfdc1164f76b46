package naming

import (
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
		{name: "space", in: "my group", wantPrefix: "my_group-"},
		{name: "colon", in: "ns:x", wantPrefix: "ns_x-"},
		{name: "unicode", in: "grüße", wantPrefix: "gr__e-"},
		{name: "aws prefix", in: "aws/lambda", wantPrefix: "_aws/lambda-"},
		{name: "too long", in: long, wantPrefix: strings.Repeat("a", 499) + "-"},
		{name: "empty", in: "", wantPrefix: "-"},
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
		{name: "colon and star", in: "a:b*c", wantPrefix: "a_b_c-"},
		{name: "invalid utf8", in: "a\xffb", wantPrefix: "a_b-"},
		{name: "too long multibyte", in: strings.Repeat("ä", 300), wantPrefix: strings.Repeat("ä", 249) + "-"},
		{name: "empty", in: "", wantPrefix: "-"},
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

// Two different names that rewrite to the same characters must still get different names.
func TestRewriteIsCollisionFree(t *testing.T) {
	seen := map[string]string{}
	for _, in := range []string{"a b", "a:b", "a*b", "a\tb", "a%b", "a b ", "a  b"} {
		got, _ := Group(in)
		if prev, ok := seen[got]; ok {
			t.Fatalf("%q and %q both map to %q", prev, in, got)
		}
		seen[got] = in
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
