// SPDX-License-Identifier: Apache-2.0

// Package klogline parses one Kubernetes klog log line, in the text format written by
// k8s.io/klog/v2 or the JSON format written by k8s.io/component-base/logs/json, into a Record.
// It has no dependency on the collector.
package klogline

import "time"

// Format tells which klog output format a line was written in.
type Format uint8

const (
	// FormatNone means the line is not a klog line.
	FormatNone Format = iota
	// FormatText is the klog text format (`I0102 15:04:05.000000 1 file.go:1] ...`).
	FormatText
	// FormatJSON is the component-base JSON format: numeric ts, caller, msg, no level key.
	FormatJSON
	// FormatZap is a zap (or zapr) production JSON line: ts, msg and a level key. Only
	// recognized when the Parser allows it: application logs use it too.
	FormatZap
)

// String returns "text", "json" or "none".
func (f Format) String() string {
	switch f {
	case FormatText:
		return "text"
	case FormatJSON:
		return "json"
	case FormatZap:
		return "zap"
	}
	return "none"
}

// Severity is a klog severity.
type Severity uint8

const (
	// SeverityUnset means the line did not say.
	SeverityUnset Severity = iota
	// SeverityInfo is klog's I.
	SeverityInfo
	// SeverityWarning is klog's W.
	SeverityWarning
	// SeverityError is klog's E.
	SeverityError
	// SeverityFatal is klog's F.
	SeverityFatal
	// SeverityDebug is zap's debug level and zapr's V(2) and above (Level(-n)).
	SeverityDebug
)

// String returns klog's name for the severity.
func (s Severity) String() string {
	switch s {
	case SeverityInfo:
		return "INFO"
	case SeverityWarning:
		return "WARNING"
	case SeverityError:
		return "ERROR"
	case SeverityFatal:
		return "FATAL"
	case SeverityDebug:
		return "DEBUG"
	}
	return ""
}

// Kind is the type of a Value.
type Kind uint8

const (
	// KindString is a string.
	KindString Kind = iota
	// KindInt is a 64-bit signed integer.
	KindInt
	// KindDouble is a 64-bit float.
	KindDouble
	// KindBool is a boolean.
	KindBool
	// KindNull is JSON null.
	KindNull
	// KindMap is a JSON object; Items holds its members in order.
	KindMap
	// KindSlice is a JSON array; Items holds its elements with empty keys.
	KindSlice
)

// Value is one typed value.
type Value struct {
	Str    string
	Items  []Field
	Int    int64
	Double float64
	Kind   Kind
	Bool   bool
}

// Field is a key and its value.
type Field struct {
	Key   string
	Value Value
}

// Record is the result of parsing one line. Parse resets it; its slices are reused.
type Record struct {
	// Fields are the key/value pairs other than the ones below, in line order.
	Fields []Field
	// Message is the message (the body of the record).
	Message string
	// File and Line are the source location (text header or JSON caller).
	File string
	// Caller is the raw JSON caller.
	Caller string
	// Level is a zap line's level as written ("info", "Level(-2)"); it is the severity text.
	Level string
	// Problem describes why the record is partial; empty when the line parsed fully.
	Problem string
	// Unparsed is the part of the line that could not be parsed (partial records only).
	Unparsed string
	// Err is the error value (text `err=` or JSON `err`); valid when HasErr.
	Err Value
	// Time is the record time; valid when HasTime.
	Time       time.Time
	Line       int64
	ThreadID   int64
	Verbosity  int64
	Format     Format
	Severity   Severity
	HasTime    bool
	HasLine    bool
	HasThread  bool
	HasVerbose bool
	HasErr     bool
	// Structured is true for text lines written by InfoS/ErrorS (quoted message + pairs).
	Structured bool
}

// Partial reports whether part of the line could not be parsed.
func (r *Record) Partial() bool { return r.Problem != "" }

// Release drops the references a record holds into parsed lines, so that keeping the record
// for reuse does not keep the lines alive.
func (r *Record) Release() {
	clear(r.Fields[:cap(r.Fields)])
	r.reset()
}

func (r *Record) reset() {
	fields := r.Fields[:0]
	*r = Record{Fields: fields}
}

func (r *Record) fail(problem, unparsed string) {
	if r.Problem == "" {
		r.Problem = problem
		r.Unparsed = unparsed
	}
}
