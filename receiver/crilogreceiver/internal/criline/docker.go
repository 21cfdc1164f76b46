// SPDX-License-Identifier: Apache-2.0

package criline

import "github.com/otelcol-k8s/otelcol-k8s/internal/jsonstring"

// DockerParser parses Docker json-file lines: {"log":"...","stream":"stdout","time":"..."}.
// Unknown members (such as "attrs") are skipped. A "log" value without a trailing newline is a
// partial piece of a longer entry. The zero value is ready to use; a DockerParser keeps a
// scratch buffer and is not safe for concurrent use.
type DockerParser struct {
	scratch []byte
	key     []byte
}

// Parse parses line (without its trailing newline) into out.
func (p *DockerParser) Parse(line []byte, out *Line) error {
	i := skipWS(line, 0)
	if i >= len(line) || line[i] != '{' {
		return ErrJSON
	}
	i++
	var (
		logVal, streamVal, timeVal []byte
		haveLog, haveStream        bool
		haveTime                   bool
	)
	p.scratch = p.scratch[:0]
	first := true
	for {
		i = skipWS(line, i)
		if i >= len(line) {
			return ErrJSON
		}
		if line[i] == '}' {
			i++
			break
		}
		if !first {
			if line[i] != ',' {
				return ErrJSON
			}
			i = skipWS(line, i+1)
		}
		first = false
		key, next, ok := p.readKey(line, i)
		if !ok {
			return ErrJSON
		}
		i = skipWS(line, next)
		if i >= len(line) || line[i] != ':' {
			return ErrJSON
		}
		i = skipWS(line, i+1)
		switch string(key) {
		case "log", "stream", "time":
			if i >= len(line) || line[i] != '"' {
				return ErrJSON
			}
			start, end, esc, ok := scanString(line, i)
			if !ok {
				return ErrJSON
			}
			val := line[start:end]
			if esc {
				// Decoded values are appended to scratch with capped slices: a later append
				// never writes into an earlier value, and a reallocation leaves it intact.
				mark := len(p.scratch)
				var ok bool
				p.scratch, ok = jsonstring.Unescape(p.scratch, val)
				if !ok {
					return ErrJSON
				}
				val = p.scratch[mark:len(p.scratch):len(p.scratch)]
			}
			switch key[0] {
			case 'l':
				logVal, haveLog = val, true
			case 's':
				streamVal, haveStream = val, true
			default:
				timeVal, haveTime = val, true
			}
			i = end + 1
		default:
			next, ok := skipValue(line, i, 0)
			if !ok {
				return ErrJSON
			}
			i = next
		}
	}
	if skipWS(line, i) != len(line) || !haveLog || !haveStream || !haveTime {
		return ErrJSON
	}
	switch string(streamVal) {
	case "stdout":
		out.Stream = Stdout
	case "stderr":
		out.Stream = Stderr
	default:
		return ErrStream
	}
	t, err := ParseTime(timeVal)
	if err != nil {
		return err
	}
	out.Time = t
	out.Tags = nil
	if n := len(logVal); n > 0 && logVal[n-1] == '\n' {
		out.Partial = false
		out.Content = logVal[:n-1]
	} else {
		out.Partial = true
		out.Content = logVal
	}
	return nil
}

// readKey reads the member name starting at the quote at line[i].
func (p *DockerParser) readKey(line []byte, i int) ([]byte, int, bool) {
	if i >= len(line) || line[i] != '"' {
		return nil, 0, false
	}
	start, end, esc, ok := scanString(line, i)
	if !ok {
		return nil, 0, false
	}
	if !esc {
		return line[start:end], end + 1, true
	}
	p.key, ok = jsonstring.Unescape(p.key[:0], line[start:end])
	return p.key, end + 1, ok
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanString finds the closing quote of the string whose opening quote is at b[i]. It returns
// the content bounds and whether the content has escapes.
func scanString(b []byte, i int) (start, end int, esc, ok bool) {
	start = i + 1
	for j := start; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return start, j, esc, true
		case c == '\\':
			esc = true
			j++
		case c < 0x20:
			return 0, 0, false, false
		}
	}
	return 0, 0, false, false
}

// skipValue returns the index just after the JSON value starting at b[i].
func skipValue(b []byte, i, depth int) (int, bool) {
	if depth > 64 || i >= len(b) {
		return 0, false
	}
	switch c := b[i]; c {
	case '"':
		_, end, _, ok := scanString(b, i)
		return end + 1, ok
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1, true
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return 0, false
				}
				_, end, _, ok := scanString(b, i)
				if !ok {
					return 0, false
				}
				i = skipWS(b, end+1)
				if i >= len(b) || b[i] != ':' {
					return 0, false
				}
				i = skipWS(b, i+1)
			}
			next, ok := skipValue(b, i, depth+1)
			if !ok {
				return 0, false
			}
			i = skipWS(b, next)
			if i >= len(b) {
				return 0, false
			}
			if b[i] == closer {
				return i + 1, true
			}
			if b[i] != ',' {
				return 0, false
			}
			i = skipWS(b, i+1)
		}
	default:
		// A number or literal: its characters up to the next delimiter.
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
			j++
		}
		if j == i || !validScalar(b[i:j]) {
			return 0, false
		}
		return j, true
	}
}

func validScalar(s []byte) bool {
	switch string(s) {
	case "true", "false", "null":
		return true
	}
	// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := skipDigits(s, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func skipDigits(s []byte, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
