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

// AppendMessage appends the message for rec (with resource attributes res) to dst.
func AppendMessage(dst []byte, f Format, res pcommon.Map, rec plog.LogRecord, extra Extra) []byte {
	if f == Raw {
		return appendValidUTF8(dst, rec.Body().AsString())
	}
	dst = append(dst, '{')
	first := true
	field := func(name string) { // one of the fixed names below: nothing to escape
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
	}
	ts := rec.Timestamp()
	if ts == 0 {
		ts = rec.ObservedTimestamp()
	}
	if ts != 0 {
		field("timestamp")
		dst = append(dst, '"')
		dst = appendTimestamp(dst, ts)
		dst = append(dst, '"')
	}
	if s := rec.SeverityText(); s != "" {
		field("severity_text")
		dst = appendString(dst, s)
	}
	if n := rec.SeverityNumber(); n != plog.SeverityNumberUnspecified {
		field("severity_number")
		dst = strconv.AppendInt(dst, int64(n), 10)
	}
	if rec.Body().Type() != pcommon.ValueTypeEmpty {
		field("body")
		dst = appendValue(dst, rec.Body())
	}
	if id := rec.TraceID(); !id.IsEmpty() {
		field("trace_id")
		dst = append(dst, '"')
		dst = hex.AppendEncode(dst, id[:])
		dst = append(dst, '"')
	}
	if id := rec.SpanID(); !id.IsEmpty() {
		field("span_id")
		dst = append(dst, '"')
		dst = hex.AppendEncode(dst, id[:])
		dst = append(dst, '"')
	}
	if attrs := rec.Attributes(); attrs.Len() > 0 {
		field("attributes")
		dst = appendMap(dst, attrs, Extra{})
	}
	if res.Len() > 0 || extra.Key != "" {
		field("resource")
		dst = appendMap(dst, res, extra)
	}
	return append(dst, '}')
}

// appendTimestamp appends ts in UTC as time.RFC3339Nano writes it (the fraction without its
// trailing zeros, none when zero), without going through time.Time: the date comes from the
// day count by integer arithmetic on the proleptic Gregorian calendar's 400-year eras.
func appendTimestamp(dst []byte, ts pcommon.Timestamp) []byte {
	if ts > math.MaxInt64 { // AsTime wraps these to before 1970; keep its answer
		return ts.AsTime().UTC().AppendFormat(dst, time.RFC3339Nano)
	}
	secs, nanos := int64(ts/1e9), int(ts%1e9)
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
	dst = append2(append(dst, ':'), rem%60)
	if nanos != 0 {
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
		dst = append(dst, frac[:n]...)
	}
	return append(dst, 'Z')
}

const decimalDigits = "0123456789"

// append2 appends v (0 to 99) as two digits.
func append2(dst []byte, v int) []byte {
	return append(dst, decimalDigits[v/10], decimalDigits[v%10])
}

// appendMap writes m as a JSON object; a non-empty extra.Key is written last with its value,
// in place of m's own value for that key.
func appendMap(dst []byte, m pcommon.Map, extra Extra) []byte {
	dst = append(dst, '{')
	first := true
	addExtra := extra.Key != ""
	m.Range(func(k string, v pcommon.Value) bool {
		if addExtra && k == extra.Key {
			return true
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendValue(dst, v)
		return true
	})
	if addExtra {
		if !first {
			dst = append(dst, ',')
		}
		dst = appendString(dst, extra.Key)
		dst = append(dst, ':')
		dst = appendString(dst, extra.Value)
	}
	return append(dst, '}')
}

func appendValue(dst []byte, v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return appendString(dst, v.Str())
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(dst, v.Int(), 10)
	case pcommon.ValueTypeDouble:
		d := v.Double()
		if math.IsNaN(d) || math.IsInf(d, 0) { // not representable in JSON
			return appendString(dst, strconv.FormatFloat(d, 'g', -1, 64))
		}
		return strconv.AppendFloat(dst, d, 'g', -1, 64)
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(dst, v.Bool())
	case pcommon.ValueTypeMap:
		return appendMap(dst, v.Map(), Extra{})
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		dst = append(dst, '[')
		for i := 0; i < s.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, s.At(i))
		}
		return append(dst, ']')
	case pcommon.ValueTypeBytes:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.Bytes().AsRaw())
		return append(dst, '"')
	}
	return append(dst, "null"...)
}

const hexDigits = "0123456789abcdef"

// plain marks the bytes a JSON string holds as they are and that need no UTF-8 check:
// printable ASCII other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

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
//
// It writes through an index into dst's spare capacity. Every input byte becomes at most six
// output bytes (a \u00XX escape), so with the room known the steps run in stretches without
// a bounds or room check, reading and writing through pointers: each step stores the next
// eight input bytes whole and then advances only past the plain ones, so a run of plain bytes
// costs one load, one store and one test per eight, and a '"' or '\\' (which a JSON message
// is full of) two stores.
func appendString(dst []byte, s string) []byte {
	buf := slices.Grow(dst, len(s)+len(s)/8+stringSlack)
	buf = buf[:cap(buf)]
	j := len(dst)
	buf[j] = '"'
	j++
	src := unsafe.Pointer(unsafe.StringData(s)) //nolint:gosec // read below only at offsets i+7 < len(s), or i < len(s)
	for i := 0; i < len(s); {
		// This stretch may consume n more input bytes: its output fits in buf with
		// stringSlack to spare, which the 8-byte store needs.
		n := min(len(s)-i, (len(buf)-j-stringSlack)/6)
		if n <= 0 {
			rest := len(s) - i
			buf = slices.Grow(buf[:j], rest+rest/8+6+stringSlack)
			buf = buf[:cap(buf)]
			continue
		}
		end := i + n
		dstp := unsafe.Pointer(unsafe.SliceData(buf)) //nolint:gosec // written below only at offsets j+7 < len(buf) (the stretch's room)
		for i < end {
			if i+8 <= len(s) {
				x := load8(unsafe.Add(src, i))
				store8(unsafe.Add(dstp, j), x)
				m := special8(x)
				if m == 0 {
					i += 8
					j += 8
					continue
				}
				k := bits.TrailingZeros64(m) >> 3
				i += k
				j += k
			}
			b := *(*byte)(unsafe.Add(src, i))
			switch {
			case b == '"' || b == '\\':
				*(*[2]byte)(unsafe.Add(dstp, j)) = [2]byte{'\\', b}
				i++
				j += 2
			case plain[b]:
				*(*byte)(unsafe.Add(dstp, j)) = b
				i++
				j++
			case b >= utf8.RuneSelf:
				r, size := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && size == 1 {
					j += copy(buf[j:], "\ufffd")
				} else {
					j += copy(buf[j:], s[i:i+size])
				}
				i += size
			default:
				buf[j] = '\\'
				switch b {
				case '\n':
					buf[j+1] = 'n'
				case '\r':
					buf[j+1] = 'r'
				case '\t':
					buf[j+1] = 't'
				default:
					buf[j+1], buf[j+2], buf[j+3], buf[j+4], buf[j+5] = 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF]
					j += 4
				}
				j += 2
				i++
			}
		}
	}
	buf[j] = '"'
	return buf[:j+1]
}

// stringSlack is the spare room appendString keeps ahead of its write index: an 8-byte store,
// or one escape (at most 6 bytes), or one rune (at most 4), and the closing quote.
const stringSlack = 16

// appendValidUTF8 appends s with every invalid UTF-8 sequence replaced by U+FFFD, as the JSON
// body will carry it: a raw message is sized (and truncated or split) in the bytes CloudWatch
// counts, not in the shorter invalid input.
func appendValidUTF8(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return append(dst, s...)
	}
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size <= 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[:size]...)
		}
		s = s[size:]
	}
	return dst
}
