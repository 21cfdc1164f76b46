// SPDX-License-Identifier: Apache-2.0

package joiner

import "bytes"

// phase is where a stream's open record stands under the stack-trace rules (design.md,
// "Stack traces"). It is saved with the record.
type phase uint8

const (
	phNone      phase = iota
	phHeld            // one ordinary line, waiting to see whether a frame follows (rule 1)
	phKlog            // a klog record (preset auto, rule 5)
	phFrames          // Java, Node.js or Ruby frames
	phNodeProps       // a Node.js error's printed properties, after a frame ending in " {"
	phPy              // a Python traceback's body
	phPyDone          // after a Python traceback's exception line
	phPyChain         // after Python's sentence chaining two tracebacks
	phGo              // a Go panic or goroutine dump
	phDone            // a trace that nothing continues but a blank line's confirmation
	numPhases
)

// traceEntry applies the stack-trace rules to one finished entry of stream idx.
func (j *Joiner) traceEntry(idx int, e *Entry, now int64, emit func(*Entry)) {
	st := j.stream(idx)
	m := &st.multi
	c := e.Content
	expectContinued := st.expectContinued
	st.expectContinued = false
	if m.active && st.tent.active {
		// Rule 4: the line held tentatively joins only with what follows it here.
		if ph := confirmsTent(st.ph, c); ph != phNone {
			j.appendLine(st, idx, j.tentEntry(st, idx), now, emit)
			st.tent.reset()
			j.appendLine(st, idx, e, now, emit)
			st.ph = ph
			return
		}
		if st.ph == phHeld {
			// A Java exception line without a frame after it: the held line goes alone and
			// the exception line is held in its place, for c to be taken against it.
			j.emitMulti(st, idx, emit)
			j.openMulti(m, j.tentEntry(st, idx), now, 0)
			st.tent.reset()
		} else {
			j.closeRecord(st, idx, emit)
		}
	}
	if m.active {
		switch {
		case len(c) == 0 && blankMayFollow(st.ph), st.ph == phHeld && javaExceptionLine(c):
			t := &st.tent
			t.start(e.Time, now, e.Tags)
			t.buf = append(t.buf, c...)
			t.from, t.pieces, t.dropped, t.flags = e.from, e.Pieces, e.Dropped, e.Flags
			m.last = now
			return
		default:
			if ph := j.continues(st.ph, c); ph != phNone {
				j.appendLine(st, idx, e, now, emit)
				st.ph = ph
				return
			}
			j.closeRecord(st, idx, emit)
		}
	}
	// A fresh entry (rules 1, 2 and 5).
	var ph phase
	switch {
	case len(c) == 0:
		emit(e) // a blank line starts nothing and is never held
		return
	case j.cfg.IsStart != nil && j.cfg.IsStart(c):
		ph = phKlog
	default:
		if ph = traceStart(c); ph == phNone {
			ph = phHeld
		}
	}
	var extra Flags
	if expectContinued && ph == phHeld {
		extra = Continued
	}
	j.openMulti(m, e, now, extra)
	st.ph = ph
}

// appendLine appends e to the open record, or, when the record would pass the size limit,
// emits it whole and opens a continuation with e (the phase stays).
func (j *Joiner) appendLine(st *stream, idx int, e *Entry, now int64, emit func(*Entry)) {
	m := &st.multi
	if len(m.buf)+1+len(e.Content) <= j.cfg.MaxLogSize {
		m.buf = append(m.buf, '\n')
		m.buf = append(m.buf, e.Content...)
		m.pieces += e.Pieces
		m.dropped += e.Dropped
		m.flags |= e.Flags
		m.last = now
		return
	}
	j.emitMulti(st, idx, emit)
	j.openMulti(m, e, now, Continued)
}

// closeRecord emits the open record, then its tentative line as a record of its own.
func (j *Joiner) closeRecord(st *stream, idx int, emit func(*Entry)) {
	j.emitMulti(st, idx, emit)
	if st.tent.active {
		emit(j.tentEntry(st, idx))
		st.tent.reset()
	}
	st.ph = phNone
}

// tentEntry is the tentative line as an entry.
func (j *Joiner) tentEntry(st *stream, idx int) *Entry {
	t := &st.tent
	e := &j.tout
	*e = Entry{Time: t.time, Stream: idx, Tags: t.tags, Content: t.buf, Pieces: t.pieces, Dropped: t.dropped, Flags: t.flags, from: t.from}
	return e
}

// continues reports the phase after c when c continues a record in phase ph (rules 1, 3, 5),
// phNone when it does not.
func (j *Joiner) continues(ph phase, c []byte) phase {
	if len(c) == 0 {
		return phNone
	}
	switch ph {
	case phKlog:
		if !j.cfg.IsStart(c) && (traceStart(c) == phNone || goroutineHeader(c)) {
			return phKlog
		}
	case phHeld:
		if ok, props := atFrame(c); ok {
			return framesPhase(props)
		}
		if rubyFrame(c) {
			return phFrames
		}
	case phFrames:
		if ok, props := atFrame(c); ok {
			return framesPhase(props)
		}
		if rubyFrame(c) || javaTraceLine(c) {
			return phFrames
		}
	case phNodeProps:
		switch {
		case indented(c):
			return phNodeProps
		case len(c) == 1 && c[0] == '}':
			return phFrames
		}
	case phPy:
		switch {
		case indented(c):
			return phPy
		case pyExceptionLine(c):
			return phPyDone
		}
	case phGo:
		if goLine(c) {
			return phGo
		}
	}
	return phNone
}

func framesPhase(props bool) phase {
	if props {
		return phNodeProps
	}
	return phFrames
}

// blankMayFollow reports whether a blank line in phase ph is held tentatively (rule 4).
func blankMayFollow(ph phase) bool {
	switch ph {
	case phFrames, phPyDone, phPyChain, phGo:
		return true
	}
	return false
}

// confirmsTent reports the phase after c when c, following a line held tentatively in phase
// ph, confirms it (rules 1 and 4); phNone otherwise.
func confirmsTent(ph phase, c []byte) phase {
	switch ph {
	case phHeld: // after a Java exception line
		if ok, props := atFrame(c); ok {
			return framesPhase(props)
		}
	case phPyDone:
		if string(c) == "During handling of the above exception, another exception occurred:" ||
			string(c) == "The above exception was the direct cause of the following exception:" {
			return phPyChain
		}
	case phPyChain:
		if pyTracebackStart(c) {
			return phPy
		}
	case phGo:
		if goroutineHeader(c) {
			return phGo
		}
	case phFrames:
		if bytes.HasPrefix(c, []byte("Node.js v")) {
			return phDone
		}
	}
	return phNone
}

// traceStart reports the phase of a line that starts a trace by itself (rule 2), phNone for
// any other line.
func traceStart(c []byte) phase {
	if len(c) == 0 {
		return phNone
	}
	switch c[0] {
	case 'T', ' ':
		if pyTracebackStart(c) {
			return phPy
		}
	case 'p':
		if bytes.HasPrefix(c, []byte("panic: ")) {
			return phGo
		}
	case 'f':
		if bytes.HasPrefix(c, []byte("fatal error: ")) {
			return phGo
		}
	case 'g':
		if goroutineHeader(c) {
			return phGo
		}
	case 'S':
		if signalHeader(c) {
			return phGo
		}
	}
	if bytes.Contains(c, []byte("http: panic serving ")) {
		return phGo
	}
	return phNone
}

func pyTracebackStart(c []byte) bool {
	if string(c) == "Traceback (most recent call last):" {
		return true
	}
	// Exception groups (Python 3.11): "  + Exception Group Traceback (most recent call last):".
	r := trimLeft(c)
	return len(r) < len(c) && string(r) == "+ Exception Group Traceback (most recent call last):"
}

// goroutineHeader: "goroutine N [state]:" (Go 1.23 adds "gp=... m=..." before the bracket).
func goroutineHeader(c []byte) bool {
	r, ok := bytes.CutPrefix(c, []byte("goroutine "))
	return ok && len(r) > 0 && isDigit(r[0]) && bytes.HasSuffix(r, []byte("]:"))
}

// signalHeader: the Go runtime's "SIGQUIT: quit", "SIGSEGV: segmentation violation", ...
func signalHeader(c []byte) bool {
	i := 3
	for i < len(c) && c[i] >= 'A' && c[i] <= 'Z' {
		i++
	}
	return bytes.HasPrefix(c, []byte("SIG")) && i > 3 && i+1 < len(c) && c[i] == ':' && c[i+1] == ' '
}

// goLine reports whether c continues a Go panic or goroutine dump (rule 3).
func goLine(c []byte) bool {
	if indented(c) {
		return true // "\t/path/file.go:12 +0x1d", "\tpanic: ..." of a re-panic
	}
	for _, p := range [...]string{"[signal ", "created by ", "exit status ", "PC=", "...additional frames elided..."} {
		if bytes.HasPrefix(c, []byte(p)) {
			return true
		}
	}
	return goroutineHeader(c) || goFunctionLine(c)
}

// goFunctionLine: "main.main()", "main.(*T).m(0xc000010000, {0x4b3e2a, 0x5})",
// "panic({0x4a0b60?, 0x53f4e0?})": a name without blanks up to the first '(' and a final ')'.
func goFunctionLine(c []byte) bool {
	if !isIdentStart(c[0]) || c[len(c)-1] != ')' {
		return false
	}
	i := bytes.IndexByte(c, '(')
	return i > 0 && !bytes.ContainsAny(c[:i], " \t")
}

// atFrame reports whether c is a Java or Node.js stack frame ("\tat pkg.Class.m(File.java:12)",
// "    at fn (/app/x.js:10:5)", "    at /app/x.js:10:5"), and whether it ends with " {" (a
// Node.js error whose properties follow).
func atFrame(c []byte) (ok, props bool) {
	if !indented(c) {
		return false, false
	}
	r, found := bytes.CutPrefix(trimLeft(c), []byte("at "))
	if !found {
		return false, false
	}
	r = trimRight(r)
	if s, cut := bytes.CutSuffix(r, []byte(" {")); cut {
		r, props = s, true
	}
	return javaFrame(r) || nodeFrame(r), props
}

// javaFrame: "com.x.Y.m(Y.java:12)", "java.base/java.lang.Thread.run(Thread.java:829)",
// "x.Y.m(Native Method)", optionally followed by logback's packaging data " ~[app.jar:1.0]".
func javaFrame(r []byte) bool {
	i := bytes.IndexByte(r, '(')
	if i <= 0 || bytes.ContainsAny(r[:i], " \t") || !bytes.ContainsAny(r[:i], "./") {
		return false
	}
	k := bytes.IndexByte(r[i:], ')')
	if k < 0 {
		return false
	}
	tail := r[i+k+1:]
	if len(tail) == 0 {
		return true
	}
	tail = bytes.TrimPrefix(tail, []byte(" "))
	tail = bytes.TrimPrefix(tail, []byte("~"))
	return len(tail) >= 2 && tail[0] == '[' && tail[len(tail)-1] == ']'
}

// nodeFrame: "fn (/app/x.js:10:5)", "async Promise.all (index 0)", "new Foo (<anonymous>)",
// "/app/x.js:10:5", "file:///app/x.mjs:3:9".
func nodeFrame(r []byte) bool {
	if len(r) == 0 {
		return false
	}
	if r[len(r)-1] != ')' {
		return !bytes.ContainsAny(r, " \t") && endsLineCol(r)
	}
	open := bytes.LastIndex(r, []byte(" ("))
	if open <= 0 {
		return false
	}
	loc := r[open+2 : len(r)-1]
	switch {
	case endsLineCol(loc), string(loc) == "<anonymous>", string(loc) == "native":
		return true
	}
	n, ok := bytes.CutPrefix(loc, []byte("index "))
	return ok && allDigits(n)
}

// endsLineCol: "...:12:5".
func endsLineCol(b []byte) bool {
	i := bytes.LastIndexByte(b, ':')
	if i <= 0 || !allDigits(b[i+1:]) {
		return false
	}
	b = b[:i]
	k := bytes.LastIndexByte(b, ':')
	return k > 0 && allDigits(b[k+1:])
}

// rubyFrame: "\tfrom /app/x.rb:5:in 'baz'", "/app/x.rb:12:in `block in run'": a path without
// blanks, ":N:in ", a quoted name, and nothing after the closing quote.
func rubyFrame(c []byte) bool {
	if t := trimRight(c); len(t) == 0 || t[len(t)-1] != '\'' {
		return false // most lines end otherwise: no scan for ":in "
	}
	r := trimLeft(c)
	r = bytes.TrimPrefix(r, []byte("from "))
	i := bytes.Index(r, []byte(":in "))
	if i <= 0 {
		return false
	}
	pre, post := r[:i], trimRight(r[i+4:])
	k := bytes.LastIndexByte(pre, ':')
	return k > 0 && allDigits(pre[k+1:]) && !bytes.ContainsAny(pre[:k], " \t") &&
		len(post) >= 2 && (post[0] == '`' || post[0] == '\'') && post[len(post)-1] == '\''
}

// javaTraceLine: the lines of a Java (or Ruby) trace that are not frames.
func javaTraceLine(c []byte) bool {
	r := trimLeft(c)
	for _, p := range [...]string{"Caused by: ", "Suppressed: ", "Wrapped by: "} {
		if bytes.HasPrefix(r, []byte(p)) {
			return true
		}
	}
	// "... 12 more", "... 23 common frames omitted" (logback), "... 7 levels..." (Ruby).
	n, ok := bytes.CutPrefix(r, []byte("... "))
	if !ok {
		return false
	}
	d := 0
	for d < len(n) && isDigit(n[d]) {
		d++
	}
	if d == 0 {
		return false
	}
	switch string(trimRight(n[d:])) {
	case " more", " common frames omitted", " levels...":
		return true
	}
	return false
}

// javaExceptionLine: "java.lang.IllegalStateException: msg", "java.lang.NullPointerException",
// "org.example.Client$NotFound: 404": a qualified class name (a package, then a class whose
// name ends in Exception, Error or Throwable, nested classes after '$'), then ": " or the end.
func javaExceptionLine(c []byte) bool {
	end := bytes.IndexByte(c, ':')
	if end < 0 {
		end = len(c)
	} else if end+1 < len(c) && c[end+1] != ' ' {
		return false
	}
	name := c[:end]
	dot := bytes.LastIndexByte(name, '.')
	if dot <= 0 || !isIdentStart(name[0]) {
		return false
	}
	for _, b := range name {
		if b != '.' && b != '$' && !isIdentStart(b) && !isDigit(b) {
			return false
		}
	}
	class := name[dot+1:]
	if i := bytes.IndexByte(class, '$'); i >= 0 {
		class = class[:i]
	}
	if len(class) == 0 || class[0] < 'A' || class[0] > 'Z' {
		return false
	}
	return bytes.HasSuffix(class, []byte("Exception")) || bytes.HasSuffix(class, []byte("Error")) ||
		bytes.HasSuffix(class, []byte("Throwable"))
}

// pyExceptionLine: "ZeroDivisionError: division by zero", "requests.exceptions.HTTPError: 503",
// "KeyboardInterrupt": a dotted identifier, then ':' or the end of the line.
func pyExceptionLine(c []byte) bool {
	if !isIdentStart(c[0]) {
		return false
	}
	for i := 1; i < len(c); i++ {
		switch b := c[i]; {
		case b == ':':
			return true
		case b == '.' || isIdentStart(b) || isDigit(b):
		default:
			return false
		}
	}
	return true
}

func indented(c []byte) bool { return len(c) > 0 && (c[0] == ' ' || c[0] == '\t') }

func trimLeft(c []byte) []byte {
	i := 0
	for i < len(c) && (c[i] == ' ' || c[i] == '\t') {
		i++
	}
	return c[i:]
}

func trimRight(c []byte) []byte {
	i := len(c)
	for i > 0 && (c[i-1] == ' ' || c[i-1] == '\t' || c[i-1] == '\r') {
		i--
	}
	return c[:i]
}

func isDigit(b byte) bool      { return b >= '0' && b <= '9' }
func isIdentStart(b byte) bool { return b == '_' || (b|0x20) >= 'a' && (b|0x20) <= 'z' }

func allDigits(b []byte) bool { return len(b) > 0 && dig(b) }
