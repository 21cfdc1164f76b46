// SPDX-License-Identifier: Apache-2.0

package klogline

import (
	"strings"
	"unicode/utf8"
)

// scanQuoted returns the index just past the closing quote of the quoted string starting at
// s[0] == '"', and whether it contains a backslash. end is -1 when the quote does not close
// on the same line.
func scanQuoted(s string) (end int, escaped bool) {
	// Fast path: no backslash before the first quote.
	if q := strings.IndexByte(s[1:], '"'); q >= 0 {
		body := s[1 : 1+q]
		if strings.IndexByte(body, '\\') < 0 {
			if strings.IndexByte(body, '\n') >= 0 {
				return -1, false
			}
			return q + 2, false
		}
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		case '\n':
			return -1, escaped
		}
	}
	return -1, escaped
}

// unquote decodes the quoted string q (with its quotes). It accepts the escapes of Go
// (strconv.Quote, %+q) and of JSON. Without escapes it returns a substring of q.
func unquote(q string, escaped bool) (string, bool) {
	body := q[1 : len(q)-1]
	if !escaped {
		return body, true
	}
	buf := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(body) {
			return "", false
		}
		e := body[i+1]
		i += 2
		switch e {
		case 'n':
			buf = append(buf, '\n')
		case 't':
			buf = append(buf, '\t')
		case 'r':
			buf = append(buf, '\r')
		case '"', '\\', '\'', '/':
			buf = append(buf, e)
		case 'a':
			buf = append(buf, '\a')
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'v':
			buf = append(buf, '\v')
		case 'x':
			v, ok := hexN(body, i, 2)
			if !ok {
				return "", false
			}
			buf = append(buf, byte(v)) //nolint:gosec // two hex digits: at most 0xFF
			i += 2
		case '0', '1', '2', '3', '4', '5', '6', '7':
			if i+1 >= len(body) {
				return "", false
			}
			v := rune(e - '0')
			for j := 0; j < 2; j++ {
				d := body[i+j]
				if d < '0' || d > '7' {
					return "", false
				}
				v = v*8 + rune(d-'0')
			}
			if v > 255 {
				return "", false
			}
			buf = append(buf, byte(v)) //nolint:gosec // checked: at most 255
			i += 2
		case 'u':
			v, ok := hexN(body, i, 4)
			if !ok {
				return "", false
			}
			i += 4
			r := rune(v) //nolint:gosec // four hex digits: at most 0xFFFF
			if r >= 0xD800 && r < 0xDC00 {
				// JSON surrogate pair.
				if lo, ok := hexN(body, i+2, 4); ok && body[i] == '\\' && body[i+1] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (rune(lo) - 0xDC00)
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			buf = utf8.AppendRune(buf, r)
		case 'U':
			v, ok := hexN(body, i, 8)
			if !ok || v > utf8.MaxRune {
				return "", false
			}
			buf = utf8.AppendRune(buf, rune(v))
			i += 8
		default:
			return "", false
		}
	}
	return string(buf), true
}

func hexN(s string, i, n int) (uint32, bool) {
	if i < 0 || i+n > len(s) {
		return 0, false
	}
	var v uint32
	for _, c := range []byte(s[i : i+n]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint32(c)
	}
	return v, true
}
