// SPDX-License-Identifier: Apache-2.0

package routing

// globMatch reports whether s matches pattern, where '*' matches any run of bytes (including
// '/') and '?' matches one rune. Every other byte matches itself.
func globMatch(pattern, s string) bool {
	// Iterative matching with backtracking to the last '*'.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == '?':
			p++
			i += runeLen(s[i:])
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

func runeLen(s string) int {
	for n := 1; n < len(s) && n < 4; n++ {
		if s[n]&0xC0 != 0x80 {
			return n
		}
	}
	return min(len(s), 4)
}
