// SPDX-License-Identifier: Apache-2.0

// Package encoding renders a log record as a CloudWatch Logs event message.
package encoding

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// Format selects the message layout.
type Format string

// Message formats.
const (
	// JSON renders one JSON object with body, severity, timestamp, trace ids, attributes and
	// resource attributes; empty fields are left out.
	JSON Format = "json"
	// Raw renders the body only, as a string.
	Raw Format = "raw"
)

// Extra is a resource attribute the JSON format writes into the message's resource object,
// replacing any value the resource has for the key (the exporter's routed log type: a fact
// about where the record came from, registered as a resource attribute).
type Extra struct{ Key, Value string }

// AppendMessage appends the message for rec (with resource attributes res) to dst, as the
// content of the JSON string that carries it in a PutLogEvents body: escaped, without the
// quotes. It returns dst and the message's size, its length once unescaped in UTF-8 bytes,
// which is what CloudWatch counts. The escaping is written in the same pass as the message:
// a JSON message's own quotes are escaped as they are written, and the strings inside it are
// escaped twice at once (the twice table).
func AppendMessage(dst []byte, f Format, res pcommon.Map, rec plog.LogRecord, extra Extra) ([]byte, int) {
	e := Encoder{Format: f}
	e.SetResource(res, extra)
	return e.Append(dst, rec)
}

// Encoder writes the messages of a run of records as AppendMessage does, keeping what
// consecutive records share: the resource object of their resource and routed log type,
// rendered once (written per record, it was about half of a typical message's work), and
// the date and time of day of the last second a timestamp fell in.
type Encoder struct {
	Format Format

	resource      []byte // the "resource" field and its object, escaped as Append writes them
	resourceAdded int    // what the escaping added to resource

	sec      int64    // the second secText spells, when secValid
	secText  [19]byte // 2006-01-02T15:04:05
	secValid bool
}

// SetResource renders res, with extra, as the resource field of the messages Append writes
// next (none when res is empty and extra has no key). It reuses the previous rendering's
// array.
func (e *Encoder) SetResource(res pcommon.Map, extra Extra) {
	e.resource, e.resourceAdded = e.resource[:0], 0
	if e.Format == Raw || (res.Len() == 0 && extra.Key == "") {
		return
	}
	w := msgWriter{b: e.resource}
	w.name("resource")
	w.mapObject(res, extra)
	e.resource, e.resourceAdded = w.b, w.added
}

// Append appends rec's message, with the resource SetResource rendered last, as
// AppendMessage does.
func (e *Encoder) Append(dst []byte, rec plog.LogRecord) ([]byte, int) {
	if e.Format == Raw {
		return Escape(dst, rec.Body().AsString())
	}
	start := len(dst)
	w := msgWriter{b: dst}
	w.b = append(w.b, '{')
	first := true
	field := func(name string) {
		if !first {
			w.b = append(w.b, ',')
		}
		first = false
		w.name(name)
	}
	ts := rec.Timestamp()
	if ts == 0 {
		ts = rec.ObservedTimestamp()
	}
	if ts != 0 {
		field("timestamp")
		w.quote()
		w.b = e.appendTimestamp(w.b, ts)
		w.quote()
	}
	if s := rec.SeverityText(); s != "" {
		field("severity_text")
		w.str(s)
	}
	if n := rec.SeverityNumber(); n != plog.SeverityNumberUnspecified {
		field("severity_number")
		w.b = strconv.AppendInt(w.b, int64(n), 10)
	}
	if rec.Body().Type() != pcommon.ValueTypeEmpty {
		field("body")
		w.value(rec.Body())
	}
	if id := rec.TraceID(); !id.IsEmpty() {
		field("trace_id")
		w.quote()
		w.b = hex.AppendEncode(w.b, id[:])
		w.quote()
	}
	if id := rec.SpanID(); !id.IsEmpty() {
		field("span_id")
		w.quote()
		w.b = hex.AppendEncode(w.b, id[:])
		w.quote()
	}
	if attrs := rec.Attributes(); attrs.Len() > 0 {
		field("attributes")
		w.mapObject(attrs, Extra{})
	}
	if len(e.resource) > 0 {
		if !first {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, e.resource...)
		w.added += e.resourceAdded
	}
	w.b = append(w.b, '}')
	return w.b, len(w.b) - start - w.added
}

// msgWriter writes a JSON document already escaped as the content of a JSON string, and
// counts the bytes that escaping added.
type msgWriter struct {
	b     []byte
	added int
}

// name writes a field name of the document, one of the fixed names that need no escaping,
// with its quotes and the colon.
func (w *msgWriter) name(name string) {
	w.b = append(w.b, '\\', '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '\\', '"', ':')
	w.added += 2
}

// quote writes one of the document's own quotes.
func (w *msgWriter) quote() {
	w.b = append(w.b, '\\', '"')
	w.added++
}

// str writes s as a JSON string of the document.
func (w *msgWriter) str(s string) {
	var added int
	w.b, added = appendEscaped(w.b, s, twice, escapedQuoted)
	w.added += added
}

// appendTimestamp is the package's appendTimestamp, with the date and time of day of the
// last second it wrote kept: consecutive records mostly fall in the same second.
func (e *Encoder) appendTimestamp(dst []byte, ts pcommon.Timestamp) []byte {
	if ts > math.MaxInt64 {
		return appendTimestamp(dst, ts)
	}
	secs, nanos := int64(ts/1e9), int(ts%1e9)
	if !e.secValid || secs != e.sec {
		// Up to the largest int64 timestamp (year 2262) this is always 19 bytes.
		e.secText = [19]byte(appendDateTime(e.secText[:0], secs))
		e.sec, e.secValid = secs, true
	}
	return append(appendFraction(append(dst, e.secText[:]...), nanos), 'Z')
}

// appendTimestamp appends ts in UTC as time.RFC3339Nano writes it (the fraction without its
// trailing zeros, none when zero), without going through time.Time.
func appendTimestamp(dst []byte, ts pcommon.Timestamp) []byte {
	if ts > math.MaxInt64 { // AsTime wraps these to before 1970; keep its answer
		return ts.AsTime().UTC().AppendFormat(dst, time.RFC3339Nano)
	}
	dst = appendDateTime(dst, int64(ts/1e9))
	return append(appendFraction(dst, int(ts%1e9)), 'Z')
}

// appendDateTime appends the date and time of day of secs (seconds since 1970, not
// negative) as 2006-01-02T15:04:05. The date comes from the day count by integer arithmetic
// on the proleptic Gregorian calendar's 400-year eras.
func appendDateTime(dst []byte, secs int64) []byte {
	days, rem := secs/86400, int(secs%86400)

	// Days since 0000-03-01, in eras of 146,097 days; March first, so that a leap day ends
	// its year.
	z := days + 719_468
	era := z / 146_097
	doe := z - era*146_097                                   // day of the era, [0, 146096]
	yoe := (doe - doe/1460 + doe/36_524 - doe/146_096) / 365 // year of the era, [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)                 // day of the year from March 1
	mp := (5*doy + 2) / 153                                  // month from March, [0, 11]
	day := int(doy - (153*mp+2)/5 + 1)
	month := int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year := int(yoe + era*400)
	if month <= 2 {
		year++
	}

	dst = append2(append2(dst, year/100), year%100)
	dst = append2(append(dst, '-'), month)
	dst = append2(append(dst, '-'), day)
	dst = append2(append(dst, 'T'), rem/3600)
	dst = append2(append(dst, ':'), rem/60%60)
	return append2(append(dst, ':'), rem%60)
}

// appendFraction appends nanos (below one second) as a decimal fraction without its
// trailing zeros, nothing when zero.
func appendFraction(dst []byte, nanos int) []byte {
	if nanos == 0 {
		return dst
	}
	var frac [10]byte
	frac[0] = '.'
	for i := 9; i >= 1; i-- {
		frac[i] = decimalDigits[nanos%10]
		nanos /= 10
	}
	n := 10
	for frac[n-1] == '0' {
		n--
	}
	return append(dst, frac[:n]...)
}

const decimalDigits = "0123456789"

// append2 appends v (0 to 99) as two digits.
func append2(dst []byte, v int) []byte {
	return append(dst, decimalDigits[v/10], decimalDigits[v%10])
}

// mapObject writes m as a JSON object; a non-empty extra.Key is written last with its value,
// in place of m's own value for that key.
func (w *msgWriter) mapObject(m pcommon.Map, extra Extra) {
	w.b = append(w.b, '{')
	first := true
	addExtra := extra.Key != ""
	m.Range(func(k string, v pcommon.Value) bool {
		if addExtra && k == extra.Key {
			return true
		}
		if !first {
			w.b = append(w.b, ',')
		}
		first = false
		w.str(k)
		w.b = append(w.b, ':')
		w.value(v)
		return true
	})
	if addExtra {
		if !first {
			w.b = append(w.b, ',')
		}
		w.str(extra.Key)
		w.b = append(w.b, ':')
		w.str(extra.Value)
	}
	w.b = append(w.b, '}')
}

func (w *msgWriter) value(v pcommon.Value) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		w.str(v.Str())
	case pcommon.ValueTypeInt:
		w.b = strconv.AppendInt(w.b, v.Int(), 10)
	case pcommon.ValueTypeDouble:
		d := v.Double()
		if math.IsNaN(d) || math.IsInf(d, 0) { // not representable in JSON
			w.str(strconv.FormatFloat(d, 'g', -1, 64))
			return
		}
		w.b = strconv.AppendFloat(w.b, d, 'g', -1, 64)
	case pcommon.ValueTypeBool:
		w.b = strconv.AppendBool(w.b, v.Bool())
	case pcommon.ValueTypeMap:
		w.mapObject(v.Map(), Extra{})
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		w.b = append(w.b, '[')
		for i := 0; i < s.Len(); i++ {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.value(s.At(i))
		}
		w.b = append(w.b, ']')
	case pcommon.ValueTypeBytes:
		w.quote()
		w.b = base64.StdEncoding.AppendEncode(w.b, v.Bytes().AsRaw())
		w.quote()
	default:
		w.b = append(w.b, "null"...)
	}
}

const hexDigits = "0123456789abcdef"

const (
	lsb = 0x0101010101010101 // 0x01 in every byte
	msb = 0x8080808080808080 // 0x80 in every byte
)

// special8 returns, for the 8 bytes of x (one per lane, first byte lowest), a mask with a
// lane's top bit set where that byte is not plain: below 0x20, '"', '\\', or 0x80 and above.
// A borrow in the subtractions only spreads upward from a lane that already matched, so the
// lowest set bit is always a true match and the mask is zero exactly when all 8 are plain.
func special8(x uint64) uint64 {
	ctl := x - lsb*0x20
	quote := (x ^ (lsb * '"')) - lsb
	bslash := (x ^ (lsb * '\\')) - lsb
	return ((ctl|quote|bslash)&^x | x) & msb
}

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst, _ = appendEscaped(dst, s, once, quoted)
	return dst
}

// escapes says what an escaping writes for each ASCII byte; a plain byte stands for itself.
type escapes [utf8.RuneSelf]escape

// escape is what one ASCII byte becomes: the first n bytes of text, of which added are the
// escaping's own (what unescaping takes away again).
type escape struct {
	text  [8]byte
	n     uint8
	added uint8
}

// once escapes a string's bytes for a JSON string: '"' and '\\' get a backslash, control
// bytes become \n, \r, \t or \u00XX.
var once = makeEscapes(func(b byte) string {
	switch b {
	case '"', '\\':
		return string([]byte{'\\', b})
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if b < 0x20 {
		return string([]byte{'\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF]})
	}
	return string([]byte{b})
}, func(byte) int { return 1 })

// twice escapes the bytes of a string inside a JSON document that is itself the content of
// a JSON string: each byte as once escapes it, and then that escape's '"' and '\\' again.
// What an escape adds counts against the document's text: a '"' is \" in the document (2
// bytes) and \\\" here (4), so it adds 2.
var twice = makeEscapes(func(b byte) string {
	var out []byte
	for _, c := range once[b].text[:once[b].n] {
		out = append(out, once[c].text[:once[c].n]...)
	}
	return string(out)
}, func(b byte) int { return int(once[b].n) })

// makeEscapes builds an escape table from what each ASCII byte becomes and the length of the
// text that stands for.
func makeEscapes(to func(b byte) string, stands func(b byte) int) *escapes {
	t := new(escapes)
	for b := range byte(utf8.RuneSelf) {
		text := to(b)
		e := &t[b]
		copy(e.text[:], text)
		e.n = uint8(len(text))                 //nolint:gosec // at most 7 (a control byte escaped twice: \\u00XX)
		e.added = uint8(len(text) - stands(b)) //nolint:gosec // an escape is never shorter than what it stands for
	}
	return t
}

// appendEscaped appends s escaped with t, between two quotes (q: none, '"' or the escaped
// \"), and returns how many bytes the escapes added (the appended length less the length of
// the text they stand for; an escaped quote adds 1). Invalid UTF-8 becomes U+FFFD (3 bytes,
// added 0: the text it stands for is U+FFFD too).
//
// It writes through pointers into dst's spare capacity, checking the room once per step (each
// step writes less than stringSlack bytes). A step stores the next eight input bytes whole
// and advances past the plain ones, so a run of plain bytes costs one load, one store and one
// test per eight, and an escape (which a JSON message is full of) one table load and one
// store.
func appendEscaped(dst []byte, s string, t *escapes, q quote) ([]byte, int) {
	buf := slices.Grow(dst, len(s)+len(s)/8+stringSlack)
	buf = buf[:cap(buf)]
	j, added := q.write(buf, len(dst))
	src := unsafe.Pointer(unsafe.StringData(s))   //nolint:gosec // read only at offsets below len(s)
	dstp := unsafe.Pointer(unsafe.SliceData(buf)) //nolint:gosec // written only below j+stringSlack <= len(buf)
	limit := len(buf) - stringSlack
	for i := 0; i < len(s); {
		if j > limit {
			// Every step below writes less than stringSlack bytes from j.
			rest := len(s) - i
			buf = slices.Grow(buf[:j], rest+rest/4+stringSlack)
			buf = buf[:cap(buf)]
			dstp = unsafe.Pointer(unsafe.SliceData(buf)) //nolint:gosec // as above
			limit = len(buf) - stringSlack
		}
		// A run of plain words, in a loop of its own that calls nothing (so that its
		// variables stay in registers).
		stop := false // the run stopped at a byte that needs work
		for i+8 <= len(s) && j <= limit {
			x := load8(unsafe.Add(src, i))
			store8(unsafe.Add(dstp, j), x)
			if m := special8(x); m != 0 {
				k := bits.TrailingZeros64(m) >> 3
				i += k
				j += k
				stop = true
				break
			}
			i += 8
			j += 8
		}
		if !stop {
			if j > limit {
				continue
			}
			if i == len(s) {
				break
			}
			// Fewer than eight bytes are left: the last eight of s (when it has eight)
			// shifted down, the lanes above them filled with a plain byte.
			rem := len(s) - i
			var x uint64
			if len(s) >= 8 {
				x = load8(unsafe.Add(src, len(s)-8))>>(8*(8-rem)) | lsb*'a'<<(8*rem)
			} else {
				x = tail8(s[i:])
			}
			store8(unsafe.Add(dstp, j), x)
			m := special8(x)
			if m == 0 {
				j += len(s) - i
				break
			}
			k := bits.TrailingZeros64(m) >> 3 // below len(s)-i: the padding is plain
			i += k
			j += k
		}
		// j may have moved up to 7 bytes past limit: the room left is at least 9 bytes, and
		// what follows writes at most 8 (an escape's store, a rune, U+FFFD).
		b := *(*byte)(unsafe.Add(src, i))
		if b < utf8.RuneSelf {
			e := &t[b]
			store8(unsafe.Add(dstp, j), load8(unsafe.Pointer(&e.text))) //nolint:gosec // an 8-byte array
			j += int(e.n)
			added += int(e.added)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			j += copy(buf[j:], "\ufffd")
		} else {
			j += copy(buf[j:], s[i:i+size])
		}
		i += size
	}
	if len(buf)-j < 2 { // the closing quote
		buf = slices.Grow(buf[:j], 2)
		buf = buf[:cap(buf)]
	}
	j, a := q.write(buf, j)
	return buf[:j], added + a
}

// write writes the quote into buf at j, which has room for it, and returns the index after
// it and the bytes its escape adds.
func (q quote) write(buf []byte, j int) (int, int) {
	switch q {
	case quoted:
		buf[j] = '"'
		return j + 1, 0
	case escapedQuoted:
		buf[j], buf[j+1] = '\\', '"'
		return j + 2, 1
	}
	return j, 0
}

// tail8 returns the last (up to seven) bytes of a string as a word, padded with a plain byte.
func tail8(s string) uint64 {
	w := [8]byte{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'}
	copy(w[:], s)
	return load8(unsafe.Pointer(&w)) //nolint:gosec // an 8-byte array
}

// quote is what appendEscaped writes around a string.
type quote uint8

const (
	unquoted      quote = iota
	quoted              // "
	escapedQuoted       // \", a quote of a JSON document inside a JSON string
)

// stringSlack is the spare room appendEscaped keeps ahead of its write index: an 8-byte
// store, or one rune (at most 4), and a quote on each side (at most 2 bytes each).
const stringSlack = 16
