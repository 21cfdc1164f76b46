// SPDX-License-Identifier: Apache-2.0

package jsonstring

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestUnescape(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"plain", `hello world`, "hello world", true},
		{"empty", ``, "", true},
		{"simple escapes", `a\"b\\c\/d\be\ff\ng\rh\ti`, "a\"b\\c/d\be\ff\ng\rh\ti", true},
		{"unicode", `caf\u00e9 \u4e16`, "café 世", true},
		{"upper hex", `\u00E9`, "é", true},
		{"surrogate pair", `\ud83d\ude00`, "😀", true},
		{"lone high surrogate", `\ud83dx`, "\uFFFDx", true},
		{"lone low surrogate", `\ude00`, "\uFFFD", true},
		{"high surrogate then other escape", `\ud83d\u0041`, "\uFFFDA", true},
		{"high surrogate at end", `\ud83d`, "\uFFFD", true},
		{"bad escape", `a\qb`, "a", false},
		{"trailing backslash", `ab\`, "ab", false},
		{"short unicode", `\u12`, "", false},
		{"bad hex", `\u12g4`, "", false},
		{"raw non-ASCII kept", "ü\\n", "ü\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Unescape(nil, tt.in)
			if ok != tt.ok || string(got) != tt.want {
				t.Fatalf("Unescape(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
			gotBytes, okBytes := Unescape([]byte("prefix:"), []byte(tt.in))
			if okBytes != tt.ok || string(gotBytes) != "prefix:"+tt.want {
				t.Fatalf("Unescape([]byte %q) = %q, %v; want the string form's result after the prefix", tt.in, gotBytes, okBytes)
			}
		})
	}
}

// FuzzUnescape checks Unescape against encoding/json on every input both accept.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`a`, `\n`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\"x\\`, `\u`, "\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := Unescape(nil, s)
		var want string
		err := json.Unmarshal([]byte(`"`+s+`"`), &want)
		if err != nil {
			return // not a JSON string body (control characters, unescaped quotes, ...)
		}
		if !ok {
			t.Fatalf("Unescape(%q) failed; encoding/json decodes it to %q", s, want)
		}
		// encoding/json also replaces invalid UTF-8 with U+FFFD; Unescape leaves that to its
		// caller, so only valid results are compared.
		if utf8.Valid(got) && string(got) != want {
			t.Fatalf("Unescape(%q) = %q, encoding/json = %q", s, got, want)
		}
	})
}

func BenchmarkUnescape(b *testing.B) {
	in := []byte(`{\"level\":\"info\",\"msg\":\"request served\",\"path\":\"/cart/items\",\"caf\u00e9\":1}\n`)
	buf := make([]byte, 0, len(in))
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		buf, _ = Unescape(buf[:0], in)
	}
}
