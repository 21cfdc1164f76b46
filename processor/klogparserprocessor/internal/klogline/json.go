// SPDX-License-Identifier: Apache-2.0

package klogline

import (
	"strconv"
	"strings"
	"time"
)

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 64

// jsonScanner walks one JSON text.
type jsonScanner struct {
	s   string
	pos int
}

func (j *jsonScanner) skipSpace() {
	for j.pos < len(j.s) {
		switch j.s[j.pos] {
		case ' ', '\t', '\n', '\r':
			j.pos++
		default:
			return
		}
	}
}

// str parses a JSON string at j.pos.
func (j *jsonScanner) str() (string, bool) {
	if j.pos >= len(j.s) || j.s[j.pos] != '"' {
		return "", false
	}
	rest := j.s[j.pos:]
	end, escaped := scanQuoted(rest)
	if end < 0 {
		return "", false
	}
	v, ok := unquote(rest[:end], escaped)
	if !ok {
		return "", false
	}
	j.pos += end
	return v, true
}

// value parses any JSON value at j.pos.
func (j *jsonScanner) value(depth int) (Value, bool) {
	j.skipSpace()
	if j.pos >= len(j.s) {
		return Value{}, false
	}
	switch c := j.s[j.pos]; c {
	case '"':
		s, ok := j.str()
		return Value{Kind: KindString, Str: s}, ok
	case '{':
		if depth >= maxDepth {
			return Value{}, false
		}
		j.pos++
		var items []Field
		j.skipSpace()
		if j.pos < len(j.s) && j.s[j.pos] == '}' {
			j.pos++
			return Value{Kind: KindMap, Items: items}, true
		}
		for {
			j.skipSpace()
			k, ok := j.str()
			if !ok {
				return Value{}, false
			}
			j.skipSpace()
			if j.pos >= len(j.s) || j.s[j.pos] != ':' {
				return Value{}, false
			}
			j.pos++
			v, ok := j.value(depth + 1)
			if !ok {
				return Value{}, false
			}
			items = append(items, Field{Key: k, Value: v})
			if !j.next() {
				return Value{Kind: KindMap, Items: items}, j.pos <= len(j.s) && j.s[j.pos-1] == '}'
			}
		}
	case '[':
		if depth >= maxDepth {
			return Value{}, false
		}
		j.pos++
		var items []Field
		j.skipSpace()
		if j.pos < len(j.s) && j.s[j.pos] == ']' {
			j.pos++
			return Value{Kind: KindSlice, Items: items}, true
		}
		for {
			v, ok := j.value(depth + 1)
			if !ok {
				return Value{}, false
			}
			items = append(items, Field{Value: v})
			if !j.next() {
				return Value{Kind: KindSlice, Items: items}, j.pos <= len(j.s) && j.s[j.pos-1] == ']'
			}
		}
	default:
		start := j.pos
		for j.pos < len(j.s) {
			c := j.s[j.pos]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				break
			}
			j.pos++
		}
		tok := j.s[start:j.pos]
		if tok == "true" || tok == "false" || tok == "null" {
			return bareValue(tok), true
		}
		if isNum, _ := numberSyntax(tok); isNum {
			return bareValue(tok), true
		}
		return Value{}, false // not a JSON literal
	}
}

// next consumes the byte after a member and reports whether it was ',' (more follow).
// Otherwise j.s[j.pos-1] is the byte consumed, which callers compare with the closing
// bracket they expect; at the end of input j.pos is len(j.s)+1.
func (j *jsonScanner) next() bool {
	j.skipSpace()
	if j.pos >= len(j.s) {
		j.pos = len(j.s) + 1
		return false
	}
	c := j.s[j.pos]
	j.pos++
	return c == ','
}

// parseJSON parses a component-base JSON line (or a zap line when p.Zap is set); false means
// the object is some other JSON (see isComponentBase for how the two are told apart).
func (p *Parser) parseJSON(line string, rec *Record) bool {
	j := jsonScanner{s: line, pos: 1}
	var sh jsonShape
	var level string
	j.skipSpace()
	if j.pos < len(j.s) && j.s[j.pos] == '}' {
		return false
	}
	complete := false
	for {
		j.skipSpace()
		memberStart := j.pos
		k, ok := j.str()
		if ok {
			j.skipSpace()
			ok = j.pos < len(j.s) && j.s[j.pos] == ':'
		}
		var v Value
		if ok {
			j.pos++
			v, ok = j.value(1)
		}
		if !ok {
			if !sh.msg {
				return false
			}
			rec.fail("invalid JSON", line[min(memberStart, len(line)):])
			break
		}
		switch {
		case k == "ts" && !sh.ts && (v.Kind == KindDouble || v.Kind == KindInt):
			sh.ts, sh.numericTS = true, true
			sh.millisTS = isMillis(v)
			if t, ok := epochTime(v); ok {
				rec.Time, rec.HasTime = t, true
			} else {
				rec.fail("ts out of range", "")
			}
		case k == "ts" && !sh.ts && v.Kind == KindString:
			if t, err := time.Parse(time.RFC3339Nano, v.Str); err == nil {
				rec.Time, rec.HasTime, sh.ts = t, true, true
			} else {
				rec.Fields = append(rec.Fields, Field{Key: k, Value: v})
			}
		case k == "msg" && !sh.msg && v.Kind == KindString:
			rec.Message, sh.msg = v.Str, true
		case k == "v" && !rec.HasVerbose && v.Kind == KindInt && v.Int >= 0:
			rec.Verbosity, rec.HasVerbose = v.Int, true
		case k == "err" && !sh.err:
			sh.err = true
			if v.Kind != KindNull {
				rec.Err, rec.HasErr = v, true
			}
		case k == "caller" && rec.Caller == "" && v.Kind == KindString:
			rec.Caller = v.Str
			if c := strings.LastIndexByte(v.Str, ':'); c > 0 {
				if n, ok := parseLineNumber(v.Str[c+1:]); ok {
					rec.File, rec.Line, rec.HasLine = v.Str[:c], n, true
				}
			}
		case k == "level" && !sh.level:
			sh.level = true
			if v.Kind == KindString {
				level, sh.levelStr = v.Str, true
			}
		default:
			rec.Fields = append(rec.Fields, Field{Key: k, Value: v})
		}
		if !j.next() {
			if j.pos > len(j.s) || j.s[j.pos-1] != '}' {
				if !sh.msg {
					return false
				}
				rec.fail("invalid JSON", line[min(j.pos-1, len(line)):])
			} else {
				complete = true
			}
			break
		}
	}
	if complete {
		j.skipSpace()
		if j.pos < len(j.s) {
			if !sh.msg {
				return false
			}
			rec.fail("trailing data after JSON object", line[j.pos:])
		}
	}
	switch {
	case !sh.msg:
		return false
	case !p.SkipJSON && sh.isComponentBase(rec):
		rec.Format = FormatJSON
		rec.Severity = jsonSeverity(rec)
	case sh.levelStr && sh.ts && p.Zap:
		rec.Format = FormatZap
		rec.Level = level
		rec.Severity = zapSeverity(level, rec)
	default:
		return false // a JSON log of another kind: an application's, not klog's
	}
	return true
}

// jsonShape is which of klog's keys an object has, for telling component-base JSON from
// the JSON applications write.
type jsonShape struct {
	ts        bool // a numeric or RFC 3339 ts
	numericTS bool
	millisTS  bool // a numeric ts of 1e11 or more: epoch milliseconds, component-base's encoder
	msg       bool // a string msg
	err       bool // an err key, of any type
	level     bool // a level key, of any type
	levelStr  bool // a string level (zap's)
}

// isComponentBase reports whether an object with a string msg is component-base JSON (see
// design.md, "Detection for JSON"). Every application logger this must not claim (zap
// production, logrus, bunyan, pino, zerolog, slog, winston) writes a level key, which
// component-base never does; bunyan and older pino also write a numeric v, which is why v
// alone is not enough when a level is present.
func (sh jsonShape) isComponentBase(rec *Record) bool {
	switch {
	case sh.level:
		return false
	case sh.numericTS && rec.Caller != "":
		return true // 1.22 and later: ts, caller, msg
	case rec.HasVerbose && (sh.numericTS || !sh.ts):
		return true // 1.19-1.21 info records (no caller); the benchmark data have no ts
	case sh.millisTS && sh.err:
		return true // 1.19-1.21 error records: no caller and no v
	}
	return false
}

// isMillis reports whether a numeric ts is in epoch milliseconds (see epochTime).
func isMillis(v Value) bool {
	f := numberOf(v)
	return f >= maxEpochSeconds || f <= -maxEpochSeconds
}

// numberOf is a numeric Value as a float64.
func numberOf(v Value) float64 {
	if v.Kind == KindInt {
		return float64(v.Int)
	}
	return v.Double
}

// zapSeverity maps a zap level. zapr logs V(n) at zap level -n, which zap writes as "debug"
// for n = 1 and "Level(-n)" beyond: a verbosity, kept in rec.Verbosity.
func zapSeverity(level string, rec *Record) Severity {
	switch strings.ToLower(level) {
	case "debug":
		return SeverityDebug
	case "info":
		return SeverityInfo
	case "warn", "warning":
		return SeverityWarning
	case "error":
		return SeverityError
	case "dpanic", "panic", "fatal":
		return SeverityFatal
	}
	if n, ok := strings.CutPrefix(level, "Level(-"); ok {
		if v, ok := strings.CutSuffix(n, ")"); ok {
			if lvl, ok := parseLineNumber(v); ok {
				if !rec.HasVerbose {
					rec.Verbosity, rec.HasVerbose = lvl, true
				}
				return SeverityDebug
			}
		}
	}
	return SeverityUnset
}

// jsonSeverity follows zapr's convention for component-base JSON: info records carry "v",
// error records do not.
func jsonSeverity(rec *Record) Severity {
	if rec.HasVerbose {
		return SeverityInfo
	}
	return SeverityError
}

// maxEpochSeconds bounds ts (about the year 5138) so conversions stay exact and in range.
const maxEpochSeconds = 1e11

// epochTime converts ts: milliseconds (component-base) when at least 1e11, else seconds
// (plain zap). It fails for times beyond maxEpochSeconds either way.
func epochTime(v Value) (time.Time, bool) {
	f := numberOf(v)
	if isMillis(v) {
		f /= 1000
	}
	if f >= maxEpochSeconds || f <= -maxEpochSeconds || f != f {
		return time.Time{}, false
	}
	sec, frac := splitFloat(f)
	return time.Unix(sec, frac).UTC(), true
}

// splitFloat splits seconds into whole seconds and nanoseconds rounded to the microsecond,
// the precision a float64 epoch carries.
func splitFloat(s float64) (int64, int64) {
	sec := int64(s)
	if float64(sec) > s {
		sec--
	}
	ns := int64((s-float64(sec))*1e6+0.5) * 1000
	if ns >= int64(time.Second) {
		sec++
		ns -= int64(time.Second)
	}
	return sec, ns
}

func parseLineNumber(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
