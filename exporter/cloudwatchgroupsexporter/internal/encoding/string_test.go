// SPDX-License-Identifier: Apache-2.0

package encoding

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceString is appendString written one rune at a time, without the 8-byte fast path.
func referenceString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xF])
		default: // utf8.RuneError for invalid bytes
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// plain marks the bytes a JSON string holds as they are and that need no UTF-8 check:
// printable ASCII other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// TestSpecial8 checks the 8-byte test against the byte table for every byte value in every
// lane, between plain and non-plain neighbors: zero exactly when all are plain, and the
// lowest flagged lane is the first non-plain byte.
func TestSpecial8(t *testing.T) {
	for _, fill := range []byte{'a', 0x00, '"', 0xff, 0x1f, 0x21, 0x5b, 0x5d, 0x7f, 0x80} {
		for lane := range 8 {
			for v := range 256 {
				var w [8]byte
				for i := range w {
					w[i] = fill
				}
				w[lane] = byte(v)
				want := 8
				for i, c := range w {
					if !plain[c] {
						want = i
						break
					}
				}
				got := 8
				if m := special8(binary.LittleEndian.Uint64(w[:])); m != 0 {
					got = bits.TrailingZeros64(m) >> 3
				}
				if got != want {
					t.Fatalf("first special byte of % x: got %d, want %d", w, got, want)
				}
			}
		}
	}
}

func TestAppendStringMatchesReference(t *testing.T) {
	for _, s := range []string{
		"", "a", "12345678", "1234567\"", "\"1234567", strings.Repeat("x", 100) + "\n" + strings.Repeat("y", 9),
		"tab\there \x01 ctl \x7f / back\\slash 中文 😀 \xff\xfe end", "\xe4\xb8", "abcdefg\xe4\xb8\xadhij",
		benchMessage, appendStringOnce(benchMessage),
	} {
		if got, want := string(appendString(nil, s)), referenceString(s); got != want {
			t.Errorf("appendString(%q)\n got %s\nwant %s", s, got, want)
		}
	}
}

func appendStringOnce(s string) string { return string(appendString(nil, s)) }

func FuzzAppendString(f *testing.F) {
	f.Add("plain text longer than eight bytes", uint8(0))
	f.Add("\x00\"\\\xff\u2028 12345678\n", uint8(40))
	f.Add("\"\"\"\"\"\"\"\"\"\"\x01\x01\x01\x01\x01\x01", uint8(3))
	f.Fuzz(func(t *testing.T, s string, spare uint8) {
		// A prefix to keep and a little spare capacity, so growing mid-string is exercised.
		dst := make([]byte, 5, 5+int(spare))
		copy(dst, "pre:[")
		if got, want := string(appendString(dst, s)), "pre:["+referenceString(s); got != want {
			t.Fatalf("appendString(%q)\n got %s\nwant %s", s, got, want)
		}
	})
}
