// SPDX-License-Identifier: Apache-2.0

package klogline

import "strconv"

// numberSyntax reports whether s is a JSON number and whether it is an integer.
func numberSyntax(s string) (isNumber, isInt bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start {
		return false, false
	}
	if i == len(s) {
		return true, true
	}
	if s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == fs {
			return false, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == es {
			return false, false
		}
	}
	return i == len(s), false
}

// parseInt parses a syntactically valid decimal integer without allocating; ok is false on
// overflow.
func parseInt(s string) (int64, bool) {
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if v > (1<<63)/10 {
			return 0, false
		}
		v = v*10 + d
		if v > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// bareValue types an unquoted value: bool, null, int, double or else string.
func bareValue(s string) Value {
	switch s {
	case "true":
		return Value{Kind: KindBool, Bool: true}
	case "false":
		return Value{Kind: KindBool}
	case "null":
		return Value{Kind: KindNull}
	}
	if isNum, isInt := numberSyntax(s); isNum {
		if isInt {
			if v, ok := parseInt(s); ok {
				return Value{Kind: KindInt, Int: v}
			}
			// Exact digits are worth more than a rounded double.
			return Value{Kind: KindString, Str: s}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return Value{Kind: KindDouble, Double: f}
		}
	}
	return Value{Kind: KindString, Str: s}
}
