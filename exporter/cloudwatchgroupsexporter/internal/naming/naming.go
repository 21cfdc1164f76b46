// SPDX-License-Identifier: Apache-2.0

// Package naming checks and rewrites CloudWatch Logs group and stream names.
//
// A valid name is returned unchanged. An invalid one is rewritten to a valid name that ends in
// "#" and a short hash of the original, so the mapping is stable. A valid name that already
// ends like a rewrite is rewritten too, so kept names and rewritten names never meet: two
// different originals share an output only if SHA-256 collides on 48 bits.
package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// MaxLen is the longest group or stream name CloudWatch Logs accepts, in bytes.
const MaxLen = 512

// hashLen is the number of hex digits of the original's SHA-256 appended to rewritten names.
const hashLen = 12

// suffixLen is the length of "#" plus the hash.
const suffixLen = 1 + hashLen

// reservedGroupPrefix is the group name prefix reserved for AWS services.
const reservedGroupPrefix = "aws/"

func groupByteOK(b byte) bool {
	switch {
	case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		return true
	case b == '.', b == '-', b == '_', b == '/', b == '#':
		return true
	}
	return false
}

// ValidGroup reports whether CloudWatch Logs accepts name as a log group name.
func ValidGroup(name string) bool {
	if len(name) == 0 || len(name) > MaxLen || strings.HasPrefix(name, reservedGroupPrefix) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !groupByteOK(name[i]) {
			return false
		}
	}
	return true
}

// ValidStream reports whether CloudWatch Logs accepts name as a log stream name.
func ValidStream(name string) bool {
	if len(name) == 0 || len(name) > MaxLen || !utf8.ValidString(name) {
		return false
	}
	return !strings.ContainsAny(name, ":*")
}

// KeepsGroup reports whether Group returns name unchanged: it is valid and does not end like
// a rewritten name.
func KeepsGroup(name string) bool { return ValidGroup(name) && !rewriteShaped(name) }

// KeepsStream reports whether Stream returns name unchanged.
func KeepsStream(name string) bool { return ValidStream(name) && !rewriteShaped(name) }

// rewriteShaped reports whether name ends in "#" and hashLen lowercase hex digits, the suffix
// every rewritten name carries.
func rewriteShaped(name string) bool {
	if len(name) < suffixLen || name[len(name)-suffixLen] != '#' {
		return false
	}
	for i := len(name) - hashLen; i < len(name); i++ {
		if c := name[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Group returns name when it is a valid group name, otherwise a stable valid rewrite of it.
// changed reports whether name was rewritten.
func Group(name string) (sanitized string, changed bool) {
	if KeepsGroup(name) {
		return name, false
	}
	var b strings.Builder
	b.Grow(min(len(name), MaxLen) + 1)
	if strings.HasPrefix(name, reservedGroupPrefix) {
		b.WriteByte('_')
	}
	limit := MaxLen - suffixLen
	for i := 0; i < len(name) && b.Len() < limit; {
		if groupByteOK(name[i]) {
			b.WriteByte(name[i])
			i++
			continue
		}
		// One '_' per rune (or per invalid byte).
		_, size := utf8.DecodeRuneInString(name[i:])
		b.WriteByte('_')
		i += size
	}
	return b.String() + suffix(name), true
}

// Stream returns name when it is a valid stream name, otherwise a stable valid rewrite of it.
// changed reports whether name was rewritten.
func Stream(name string) (sanitized string, changed bool) {
	if KeepsStream(name) {
		return name, false
	}
	var b strings.Builder
	b.Grow(min(len(name), MaxLen))
	limit := MaxLen - suffixLen
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size <= 1, r == ':', r == '*':
			piece = "_"
		default:
			piece = name[i : i+size]
		}
		if b.Len()+len(piece) > limit {
			break
		}
		b.WriteString(piece)
		i += size
	}
	return b.String() + suffix(name), true
}

func suffix(original string) string {
	sum := sha256.Sum256([]byte(original))
	return "#" + hex.EncodeToString(sum[:])[:hashLen]
}
