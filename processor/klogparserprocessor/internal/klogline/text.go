// SPDX-License-Identifier: Apache-2.0

package klogline

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// header is the parsed text header.
type header struct {
	month, day, hour, min, sec, nsec int
}

func digit2(s string, i int) (int, bool) {
	a, b := s[i]-'0', s[i+1]-'0'
	if a > 9 || b > 9 {
		return 0, false
	}
	return int(a)*10 + int(b), true
}

// parseText parses a text line whose first byte is a severity letter. It returns false when
// the line is not a klog text line; rec is then undefined.
func (p *Parser) parseText(line string, ref time.Time, rec *Record) bool {
	// Lmmdd hh:mm:ss
	if len(line) < 14 || line[5] != ' ' || line[8] != ':' || line[11] != ':' {
		return false
	}
	var h header
	var ok1, ok2, ok3, ok4, ok5 bool
	h.month, ok1 = digit2(line, 1)
	h.day, ok2 = digit2(line, 3)
	h.hour, ok3 = digit2(line, 6)
	h.min, ok4 = digit2(line, 9)
	h.sec, ok5 = digit2(line, 12)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return false
	}
	i := 14
	if i < len(line) && line[i] == '.' {
		i++
		start := i
		scale := 100000000
		for i < len(line) && line[i] >= '0' && line[i] <= '9' {
			if i-start < 9 {
				h.nsec += int(line[i]-'0') * scale
				scale /= 10
			}
			i++
		}
		if i-start > 9 {
			return false
		}
	}
	// One or more spaces, the thread id, one or more spaces.
	sp := i
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i == sp {
		return false
	}
	start := i
	var tid int64
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		if i-start < 18 {
			tid = tid*10 + int64(line[i]-'0')
		}
		i++
	}
	if i == start || i-start > 18 {
		return false
	}
	sp = i
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i == sp {
		return false
	}
	// file:line]
	fileStart := i
	for i < len(line) && line[i] != ']' && line[i] != ' ' && line[i] != '\n' {
		i++
	}
	if i >= len(line) || line[i] != ']' {
		return false
	}
	loc := line[fileStart:i]
	colon := strings.LastIndexByte(loc, ':')
	if colon <= 0 || colon == len(loc)-1 || len(loc)-colon-1 > 18 {
		return false
	}
	var lineNo int64
	for _, c := range []byte(loc[colon+1:]) {
		if c < '0' || c > '9' {
			return false
		}
		lineNo = lineNo*10 + int64(c-'0')
	}
	i++ // ']'
	if i < len(line) && line[i] == ' ' {
		i++
	}

	rec.Format = FormatText
	switch line[0] {
	case 'I':
		rec.Severity = SeverityInfo
	case 'W':
		rec.Severity = SeverityWarning
	case 'E':
		rec.Severity = SeverityError
	default:
		rec.Severity = SeverityFatal
	}
	rec.ThreadID, rec.HasThread = tid, true
	rec.File, rec.Line, rec.HasLine = loc[:colon], lineNo, true
	if t, ok := p.headerTime(h, ref); ok {
		rec.Time, rec.HasTime = t, true
	} else {
		rec.fail("invalid header date", line[:fileStart])
	}
	p.parseRest(line[i:], rec)
	return true
}

// parseRest parses what follows the header.
func (p *Parser) parseRest(rest string, rec *Record) {
	rest = strings.TrimSuffix(strings.TrimSuffix(rest, "\n"), "\r")
	if len(rest) == 0 || rest[0] != '"' {
		rec.Message = rest
		return
	}
	end, escaped := scanQuoted(rest)
	if end < 0 || (end < len(rest) && rest[end] != ' ') || !quoteOutput(rest[1:end-1]) {
		rec.Message = rest
		return
	}
	msg, ok := unquote(rest[:end], escaped)
	if !ok {
		rec.Message = rest
		return
	}
	if end == len(rest) {
		rec.Message, rec.Structured = msg, true
		return
	}
	n, pos, problem := p.parsePairs(rest, end, rec)
	if n == 0 && problem != "" && problem != problemSplitValue {
		// Not a single pair: an Infof message that happens to start with a quote.
		rec.Fields = rec.Fields[:0]
		rec.HasErr, rec.Err = false, Value{}
		rec.Message = rest
		return
	}
	rec.Message, rec.Structured = msg, true
	if problem != "" {
		rec.fail(problem, rest[pos:])
	}
}

// quoteOutput reports whether raw (between the quotes) could have been written by
// strconv.Quote, which klog uses for the message: it escapes control characters, invalid
// UTF-8 and runes that are not printable. This keeps Infof messages that merely start with a
// quote from being mistaken for structured ones.
func quoteOutput(raw string) bool {
	high := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			high = true
		}
	}
	if !high {
		return true
	}
	for _, r := range raw {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// problemSplitValue flags a multi-line value whose lines are not part of the record.
const problemSplitValue = "multi-line value split from its record"

// parsePairs parses ` key=value` pairs starting at rest[pos]. It returns how many parsed,
// where parsing stopped and, when it stopped before the end, why.
func (p *Parser) parsePairs(rest string, pos int, rec *Record) (int, int, string) {
	n := 0
	for pos < len(rest) {
		if rest[pos] != ' ' {
			return n, pos, "expected space before key"
		}
		start := pos
		pos++
		k := pos
		for pos < len(rest) && rest[pos] != '=' && rest[pos] != ' ' && rest[pos] != '"' && rest[pos] != '\n' {
			pos++
		}
		if pos == k || pos >= len(rest) || rest[pos] != '=' {
			return n, start, "expected key="
		}
		key := rest[k:pos]
		pos++
		if pos == len(rest)-1 && rest[pos] == '<' {
			// `key=<` ends the record: the lines of a multi-line value arrived as records of
			// their own (a runtime that does not join them).
			return n, start, problemSplitValue
		}
		v, next, ok := parseTextValue(rest, pos)
		if !ok {
			return n, start, "invalid value for key " + key
		}
		pos = next
		if key == "err" && !rec.HasErr {
			rec.Err, rec.HasErr = v, true
		} else {
			rec.Fields = append(rec.Fields, Field{Key: key, Value: v})
		}
		n++
	}
	return n, pos, ""
}

// parseTextValue parses the value at rest[pos] and returns it and the index after it.
func parseTextValue(rest string, pos int) (Value, int, bool) {
	if pos >= len(rest) {
		// `key=` with nothing: klog never writes it, keep it as an empty string.
		return Value{Kind: KindString}, pos, true
	}
	switch rest[pos] {
	case '"':
		end, escaped := scanQuoted(rest[pos:])
		if end < 0 {
			return Value{}, pos, false
		}
		end += pos
		if end < len(rest) && rest[end] != ' ' {
			return Value{}, pos, false
		}
		s, ok := unquote(rest[pos:end], escaped)
		if !ok {
			return Value{}, pos, false
		}
		return Value{Kind: KindString, Str: s}, end, true
	case '<':
		if pos+1 < len(rest) && rest[pos+1] == '\n' {
			return parseMultiline(rest, pos+2)
		}
	case ' ':
		return Value{Kind: KindString}, pos, true
	}
	end := scanBare(rest, pos)
	if end < 0 {
		return Value{}, pos, false
	}
	return bareValue(rest[pos:end]), end, true
}

// parseMultiline parses the tab-indented lines after `key=<` up to the ` >` line.
func parseMultiline(rest string, pos int) (Value, int, bool) {
	first := pos
	lines := 0
	size := 0
	for !endOfMultiline(rest, pos) {
		if pos >= len(rest) || rest[pos] != '\t' {
			return Value{}, first, false
		}
		nl := strings.IndexByte(rest[pos:], '\n')
		if nl < 0 {
			return Value{}, first, false
		}
		size += nl // line without tab, plus separator
		lines++
		pos += nl + 1
	}
	end := pos + 2
	if lines == 0 {
		return Value{Kind: KindString}, end, true
	}
	if lines == 1 {
		return Value{Kind: KindString, Str: rest[first+1 : pos-1]}, end, true
	}
	var b strings.Builder
	b.Grow(size - 1)
	for i := first; i < pos; {
		nl := strings.IndexByte(rest[i:], '\n')
		if i != first {
			b.WriteByte('\n')
		}
		b.WriteString(rest[i+1 : i+nl])
		i += nl + 1
	}
	return Value{Kind: KindString, Str: b.String()}, end, true
}

// endOfMultiline reports whether rest[pos:] starts with the ` >` line that closes a
// multi-line value.
func endOfMultiline(rest string, pos int) bool {
	return pos+1 < len(rest) && rest[pos] == ' ' && rest[pos+1] == '>' &&
		(pos+2 == len(rest) || rest[pos+2] == ' ')
}

// scanBare returns the end of an unquoted value: the first space outside brackets and
// quoted strings. It returns -1 when brackets do not balance.
func scanBare(rest string, pos int) int {
	depth := 0
	for i := pos; i < len(rest); i++ {
		switch rest[i] {
		case ' ', '\n':
			if depth == 0 {
				return i
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth < 0 {
				return -1
			}
		case '"':
			if depth > 0 {
				end, _ := scanQuoted(rest[i:])
				if end < 0 {
					return -1
				}
				i += end - 1
			}
		}
	}
	if depth != 0 {
		return -1
	}
	return len(rest)
}
