// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/otelcol-k8s/otelcol-k8s/internal/jsonstring"
)

// decodePutLogEvents is a fast path for the largest and most frequent request body. It
// fills in exactly what encoding/json would and reports ok; for anything it does not
// handle the same way (invalid JSON, type mismatches, non-integer timestamps, invalid
// UTF-8, lone surrogates) it reports !ok and the caller falls back to encoding/json,
// which also words the error. FuzzDecodePutLogEvents checks the equivalence.
//
// Strings without escapes are substrings of one copy of the body and strings with
// escapes substrings of one arena, so a batch costs a handful of allocations.
func decodePutLogEvents(body []byte, in *putLogEventsInput) (ok bool) {
	d := putDecoder{s: string(body)}
	if !d.top(in) {
		return false
	}
	d.finish()
	return true
}

type putDecoder struct {
	s string
	i int
	// slabs the decoded *int64 and *string values point into, to avoid one
	// allocation per value.
	ints []int64
	strs []string
	// arena holds the unescaped strings until finish.
	arena  []byte
	fixups []fixup
}

const slabSize = 512

func (d *putDecoder) newInt(v int64) *int64 {
	if len(d.ints) == cap(d.ints) {
		d.ints = make([]int64, 0, slabSize)
	}
	d.ints = append(d.ints, v)
	return &d.ints[len(d.ints)-1]
}

func (d *putDecoder) newString() *string {
	if len(d.strs) == cap(d.strs) {
		d.strs = make([]string, 0, slabSize)
	}
	d.strs = append(d.strs, "")
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
	v := d.newString()
	*p = v
	return d.strInto(v)
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

// stringStop marks the bytes that end a run of plain string content.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// scan reads a JSON string and returns its raw content between the quotes and whether
// it contains escapes.
func (d *putDecoder) scan() (raw string, escaped, ok bool) {
	if !d.consume('"') {
		return "", false, false
	}
	start := d.i
	for d.i < len(d.s) {
		for d.i < len(d.s) && !stringStop[d.s[d.i]] {
			d.i++
		}
		if d.i >= len(d.s) {
			break
		}
		switch d.s[d.i] {
		case '"':
			raw = d.s[start:d.i]
			d.i++
			return raw, escaped, true
		case '\\':
			escaped = true
			d.i += 2
		default: // a control character
			return "", false, false
		}
	}
	return "", false, false
}

// str reads a JSON string into a new string.
func (d *putDecoder) str() (string, bool) {
	raw, escaped, ok := d.scan()
	if !ok {
		return "", false
	}
	if !escaped {
		return raw, utf8.ValidString(raw)
	}
	b, ok := jsonstring.Unescape(nil, raw)
	return string(b), ok && utf8.Valid(b)
}

// strInto reads a JSON string into *p. Strings with escapes are unescaped into the
// decoder's arena and filled in by finish, so they cost no allocation of their own.
func (d *putDecoder) strInto(p *string) bool {
	raw, escaped, ok := d.scan()
	if !ok {
		return false
	}
	if !escaped {
		*p = raw
		return utf8.ValidString(raw)
	}
	if d.arena == nil {
		d.arena = make([]byte, 0, len(d.s)) // unescaping never grows the content
	}
	off := len(d.arena)
	if d.arena, ok = jsonstring.Unescape(d.arena, raw); !ok || !utf8.Valid(d.arena[off:]) {
		return false
	}
	d.fixups = append(d.fixups, fixup{p, off, len(d.arena)})
	return true
}

// fixup is an unescaped string waiting in the arena.
type fixup struct {
	p          *string
	start, end int
}

// finish fills in the unescaped strings from one copy of the arena.
func (d *putDecoder) finish() {
	if len(d.fixups) == 0 {
		return
	}
	a := string(d.arena)
	for _, f := range d.fixups {
		*f.p = a[f.start:f.end]
	}
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
