// SPDX-License-Identifier: Apache-2.0

// Package jsonstring decodes the content of JSON strings without reflection or allocation
// beyond the destination buffer. It is shared by the components and test servers of
// otelcol-k8s that parse JSON by hand on their hot paths.
package jsonstring

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Unescape appends the decoded content of a JSON string (the bytes between its quotes) to
// dst. It reports false, with dst holding what was decoded so far, when s has an escape JSON
// does not allow or ends inside one. A \u escape that is half of a surrogate pair without its
// other half decodes to U+FFFD, as encoding/json does. Unescape does not check that the
// unescaped bytes are valid UTF-8.
func Unescape[S ~string | ~[]byte](dst []byte, s S) ([]byte, bool) {
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			// Copy the run up to the next escape at once.
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(s) {
			return dst, false
		}
		switch c := s[i+1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok {
				return dst, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if r2, ok := hex4(s, i+2); ok {
						if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
							dst = utf8.AppendRune(dst, pair)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return dst, false
		}
		i += 2
	}
	return dst, true
}

// hex4 reads the four hexadecimal digits at s[i:i+4].
func hex4[S ~string | ~[]byte](s S, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for k := i; k < i+4; k++ {
		c := s[k]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
