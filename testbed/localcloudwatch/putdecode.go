package localcloudwatch

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodePutLogEvents is a fast path for the largest and most frequent request body. It
// fills in exactly what encoding/json would and reports ok; for anything it does not
// handle the same way (invalid JSON, type mismatches, non-integer timestamps, invalid
// UTF-8, lone surrogates) it reports !ok and the caller falls back to encoding/json,
// which also words the error. FuzzDecodePutLogEvents checks the equivalence.
//
// Unescaped strings are substrings of one copy of the body, so a batch costs one
// allocation for all its messages.
func decodePutLogEvents(body []byte, in *putLogEventsInput) (ok bool) {
	d := putDecoder{s: string(body)}
	return d.top(in)
}

type putDecoder struct {
	s string
	i int
	// slabs the decoded *int64 and *string values point into, to avoid one
	// allocation per value.
	ints []int64
	strs []string
}

const slabSize = 512

func (d *putDecoder) newInt(v int64) *int64 {
	if len(d.ints) == cap(d.ints) {
		d.ints = make([]int64, 0, slabSize)
	}
	d.ints = append(d.ints, v)
	return &d.ints[len(d.ints)-1]
}

func (d *putDecoder) newString(v string) *string {
	if len(d.strs) == cap(d.strs) {
		d.strs = make([]string, 0, slabSize)
	}
	d.strs = append(d.strs, v)
	return &d.strs[len(d.strs)-1]
}

func (d *putDecoder) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next skips whitespace and returns the next byte without consuming it (0 at the end).
func (d *putDecoder) next() byte {
	d.ws()
	if d.i >= len(d.s) {
		return 0
	}
	return d.s[d.i]
}

func (d *putDecoder) consume(c byte) bool {
	if d.next() != c {
		return false
	}
	d.i++
	return true
}

func (d *putDecoder) literal(lit string) bool {
	d.ws()
	if len(d.s)-d.i < len(lit) || d.s[d.i:d.i+len(lit)] != lit {
		return false
	}
	d.i += len(lit)
	return true
}

func (d *putDecoder) top(in *putLogEventsInput) bool {
	seenEvents := false
	return d.object(func(key string) bool {
		switch key {
		case "logGroupName":
			return d.optString(&in.LogGroupName)
		case "logStreamName":
			return d.optString(&in.LogStreamName)
		case "sequenceToken":
			return d.optString(&in.SequenceToken)
		case "logEvents":
			// encoding/json decodes a repeated array into the elements of the first.
			ok := !seenEvents && d.events(&in.LogEvents)
			seenEvents = true
			return ok
		}
		// encoding/json also matches member names case-insensitively.
		return !foldsTo(key, "logGroupName", "logStreamName", "sequenceToken", "logEvents") && d.skip(0)
	}) && d.end()
}

// object reads a JSON object, calling member with the decoder at each member's value.
func (d *putDecoder) object(member func(key string) bool) bool {
	if !d.consume('{') {
		return false
	}
	if d.consume('}') {
		return true
	}
	for {
		key, ok := d.str()
		if !ok || !d.consume(':') || !member(key) {
			return false
		}
		if !d.consume(',') {
			return d.consume('}')
		}
	}
}

// array reads a JSON array, calling elem with the decoder at each element.
func (d *putDecoder) array(elem func() bool) bool {
	if !d.consume('[') {
		return false
	}
	if d.consume(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if !d.consume(',') {
			return d.consume(']')
		}
	}
}

func (d *putDecoder) end() bool {
	d.ws()
	return d.i == len(d.s)
}

// optString reads a string or null into *p (null leaves *p unchanged, as encoding/json does
// for a pointer that is already nil and sets it to nil otherwise).
func (d *putDecoder) optString(p **string) bool {
	if d.next() == 'n' {
		if !d.literal("null") {
			return false
		}
		*p = nil
		return true
	}
	v, ok := d.str()
	if !ok {
		return false
	}
	*p = d.newString(v)
	return true
}

func (d *putDecoder) events(p *[]inputLogEvent) bool {
	if d.next() == 'n' {
		if !d.literal("null") {
			return false
		}
		*p = nil
		return true
	}
	out := make([]inputLogEvent, 0, 64)
	ok := d.array(func() bool {
		out = append(out, inputLogEvent{})
		return d.event(&out[len(out)-1])
	})
	*p = out
	return ok
}

func (d *putDecoder) event(e *inputLogEvent) bool {
	if d.next() == 'n' {
		return d.literal("null") // a null element stays the zero event
	}
	return d.object(func(key string) bool {
		switch key {
		case "timestamp":
			return d.optInt(&e.Timestamp)
		case "message":
			return d.optString(&e.Message)
		}
		return !foldsTo(key, "timestamp", "message") && d.skip(0)
	})
}

func foldsTo(key string, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return true
		}
	}
	return false
}

// optInt reads an integer or null; other numbers are left to encoding/json.
func (d *putDecoder) optInt(p **int64) bool {
	c := d.next()
	if c == 'n' {
		if !d.literal("null") {
			return false
		}
		*p = nil
		return true
	}
	start := d.i
	if c == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		d.i++
	}
	if d.i == digits || (d.s[digits] == '0' && d.i-digits > 1) {
		return false
	}
	if d.i < len(d.s) && (d.s[d.i] == '.' || d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		return false
	}
	v, err := strconv.ParseInt(d.s[start:d.i], 10, 64)
	if err != nil {
		return false
	}
	*p = d.newInt(v)
	return true
}

// str reads a JSON string.
func (d *putDecoder) str() (string, bool) {
	if !d.consume('"') {
		return "", false
	}
	start := d.i
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			v := d.s[start:d.i]
			d.i++
			if !utf8.ValidString(v) {
				return "", false
			}
			return v, true
		case c == '\\':
			return d.escapedStr(start)
		case c < 0x20:
			return "", false
		}
		d.i++
	}
	return "", false
}

// escapedStr finishes a string that contains escapes, from its first byte at start.
func (d *putDecoder) escapedStr(start int) (string, bool) {
	buf := make([]byte, 0, d.i-start+64)
	buf = append(buf, d.s[start:d.i]...)
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			if !utf8.Valid(buf) {
				return "", false
			}
			return string(buf), true
		case c < 0x20:
			return "", false
		case c != '\\':
			buf = append(buf, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.s) {
			return "", false
		}
		esc := d.s[d.i+1]
		d.i += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				// A valid pair is one rune; encoding/json's handling of broken pairs
				// is left to it.
				if !d.literal(`\u`) {
					return "", false
				}
				r2, ok := d.hex4()
				if !ok {
					return "", false
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", false
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (d *putDecoder) hex4() (rune, bool) {
	if len(d.s)-d.i < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(d.s[d.i:d.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	d.i += 4
	return rune(v), true
}

// skip passes over any JSON value.
func (d *putDecoder) skip(depth int) bool {
	if depth > 64 {
		return false
	}
	switch c := d.next(); {
	case c == '"':
		_, ok := d.str()
		return ok
	case c == '{':
		return d.object(func(string) bool { return d.skip(depth + 1) })
	case c == '[':
		return d.array(func() bool { return d.skip(depth + 1) })
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	return false
}

// number passes over a JSON number, checking its grammar.
func (d *putDecoder) number() bool {
	digits := func() int {
		n := 0
		for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.s[d.i] == '-' {
		d.i++
	}
	first := d.i
	n := digits()
	if n == 0 || (n > 1 && d.s[first] == '0') {
		return false
	}
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return false
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
