// SPDX-License-Identifier: Apache-2.0

package auditlogreceiver

import (
	"errors"
	"strconv"
	"strings"
)

// auditdRecord is one line of an auditd log: `[node=N ]type=T msg=audit(SEC.MSEC:SERIAL): k=v ...`
// (design.md rule 5).
type auditdRecord struct {
	Node   string
	Type   string
	Sec    int64 // seconds since the epoch
	Milli  int64 // milliseconds
	Serial uint64
	// Fields in line order; a key repeated keeps every value. Keys of the enriched part (after
	// the 0x1d separator) are upper case by auditd's convention and kept as written.
	Fields []kv
}

type kv struct{ K, V string }

var (
	errNoType   = errors.New("no type= field")
	errNoHeader = errors.New("no msg=audit(<seconds>.<milliseconds>:<serial>): header")
)

// parseAuditd parses one auditd line (without its newline).
func parseAuditd(line string) (auditdRecord, error) {
	var r auditdRecord
	rest := line
	if v, ok := strings.CutPrefix(rest, "node="); ok {
		i := strings.IndexByte(v, ' ')
		if i < 0 {
			return r, errNoType
		}
		r.Node, rest = v[:i], v[i+1:]
	}
	v, ok := strings.CutPrefix(rest, "type=")
	if !ok {
		return r, errNoType
	}
	i := strings.IndexByte(v, ' ')
	if i <= 0 {
		return r, errNoHeader
	}
	r.Type, rest = v[:i], v[i+1:]
	v, ok = strings.CutPrefix(rest, "msg=audit(")
	if !ok {
		return r, errNoHeader
	}
	end := strings.Index(v, "):")
	if end < 0 {
		return r, errNoHeader
	}
	stamp, tail := v[:end], v[end+2:]
	dot := strings.IndexByte(stamp, '.')
	colon := strings.IndexByte(stamp, ':')
	if dot <= 0 || colon <= dot+1 {
		return r, errNoHeader
	}
	var err error
	if r.Sec, err = strconv.ParseInt(stamp[:dot], 10, 64); err != nil || r.Sec < 0 {
		return r, errNoHeader
	}
	if r.Milli, err = strconv.ParseInt(stamp[dot+1:colon], 10, 64); err != nil || r.Milli < 0 || r.Milli > 999 {
		return r, errNoHeader
	}
	if r.Serial, err = strconv.ParseUint(stamp[colon+1:], 10, 64); err != nil {
		return r, errNoHeader
	}
	r.Fields = parseFields(tail, r.Fields)
	return r, nil
}

// parseFields splits `k=v k="quoted value" msg='nested k=v'` into pairs, in order. A
// single-quoted value (the msg='...' of user-space records) is itself split and its pairs
// follow; a part without "=" is kept under the key "" (never dropped). The 0x1d separator of
// the enriched format counts as a space.
func parseFields(s string, out []kv) []kv {
	for {
		s = strings.TrimLeft(s, " \x1d")
		if s == "" {
			return out
		}
		eq := strings.IndexAny(s, "= \x1d")
		if eq < 0 || s[eq] != '=' {
			end := len(s)
			if eq >= 0 {
				end = eq
			}
			out = append(out, kv{"", s[:end]})
			s = s[end:]
			continue
		}
		key, v := s[:eq], s[eq+1:]
		switch {
		case strings.HasPrefix(v, `"`):
			if j := strings.IndexByte(v[1:], '"'); j >= 0 {
				out = append(out, kv{key, v[1 : j+1]})
				s = v[j+2:]
				continue
			}
			out = append(out, kv{key, v[1:]}) // unterminated: the rest of the line
			return out
		case strings.HasPrefix(v, `'`):
			inner := v[1:]
			j := strings.IndexByte(inner, '\'')
			if j < 0 {
				j = len(inner)
				s = ""
			} else {
				s = inner[j+1:]
			}
			out = parseFields(inner[:j], out)
			continue
		}
		end := strings.IndexAny(v, " \x1d")
		if end < 0 {
			end = len(v)
		}
		out = append(out, kv{key, v[:end]})
		s = v[end:]
	}
}
