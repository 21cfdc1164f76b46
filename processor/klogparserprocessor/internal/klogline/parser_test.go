// SPDX-License-Identifier: Apache-2.0

package klogline

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var ref2026 = time.Date(2026, time.March, 10, 12, 0, 0, 0, time.UTC)

func str(s string) Value         { return Value{Kind: KindString, Str: s} }
func i64(v int64) Value          { return Value{Kind: KindInt, Int: v} }
func f64(v float64) Value        { return Value{Kind: KindDouble, Double: v} }
func boolean(v bool) Value       { return Value{Kind: KindBool, Bool: v} }
func kv(k string, v Value) Field { return Field{Key: k, Value: v} }

func TestParseText(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		sev        Severity
		time       time.Time
		thread     int64
		file       string
		lineNo     int64
		msg        string
		structured bool
		err        *Value
		fields     []Field
		problem    string
		unparsed   string
	}{
		{
			name: "structured", line: `I0310 00:15:15.525108       1 controller_utils.go:116] "Pod status updated" pod="kube-system/kubedns" status="ready"`,
			sev: SeverityInfo, time: time.Date(2026, 3, 10, 0, 15, 15, 525108000, time.UTC), thread: 1,
			file: "controller_utils.go", lineNo: 116, msg: "Pod status updated", structured: true,
			fields: []Field{kv("pod", str("kube-system/kubedns")), kv("status", str("ready"))},
		},
		{
			name: "typed values", line: `W0310 01:02:03.000001   12345 x.go:7] "m" a=1 b=-2.5 c=true d=false e=null f={"x":1,"y":[1,2]} g=[1,2] h=1e+21 i=18446744073709551615`,
			sev: SeverityWarning, time: time.Date(2026, 3, 10, 1, 2, 3, 1000, time.UTC), thread: 12345,
			file: "x.go", lineNo: 7, msg: "m", structured: true,
			fields: []Field{
				kv("a", i64(1)), kv("b", f64(-2.5)), kv("c", boolean(true)), kv("d", boolean(false)),
				kv("e", Value{Kind: KindNull}), kv("f", str(`{"x":1,"y":[1,2]}`)), kv("g", str("[1,2]")),
				kv("h", f64(1e21)), kv("i", str("18446744073709551615")),
			},
		},
		{
			name: "error first", line: `E0310 01:02:03.123456       7 reflector.go:158] "Unhandled Error" err="dial tcp 10.0.0.1:443: connect: \"refused\"" logger="UnhandledError"`,
			sev: SeverityError, time: time.Date(2026, 3, 10, 1, 2, 3, 123456000, time.UTC), thread: 7,
			file: "reflector.go", lineNo: 158, msg: "Unhandled Error", structured: true,
			err:    &Value{Kind: KindString, Str: `dial tcp 10.0.0.1:443: connect: "refused"`},
			fields: []Field{kv("logger", str("UnhandledError"))},
		},
		{
			name: "escapes", line: "I0310 00:00:00.000000 1 a.go:1] \"tab\\there \\u00e9\\x41\\101\\U0001F600\" k=\"\\a\\v\\\\\"",
			sev: SeverityInfo, time: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), thread: 1, file: "a.go", lineNo: 1,
			msg: "tab\there éAA😀", structured: true, fields: []Field{kv("k", str("\a\v\\"))},
		},
		{
			name: "multi-line", line: "I0310 00:00:00.000000 1 a.go:1] \"m\" yaml=<\n\tapiVersion: v1\n\tkind: Pod\n >  x=1",
			sev: SeverityInfo, time: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), thread: 1, file: "a.go", lineNo: 1,
			msg: "m", structured: true, fields: []Field{kv("yaml", str("apiVersion: v1\nkind: Pod"))},
			problem: "expected key=", unparsed: "  x=1",
		},
		{
			name: "multi-line then more", line: "I0310 00:00:00.000000 1 a.go:1] \"m\" one=<\n\tonly\n > two=<\n\ta\n\t\n\tb\n > n=3",
			sev: SeverityInfo, time: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), thread: 1, file: "a.go", lineNo: 1,
			msg: "m", structured: true, fields: []Field{kv("one", str("only")), kv("two", str("a\n\nb")), kv("n", i64(3))},
		},
		{
			name: "split multi-line value", line: `E0310 00:00:00.000000 1 a.go:1] "Unhandled Error" err=<`,
			sev: SeverityError, time: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), thread: 1, file: "a.go", lineNo: 1,
			msg: "Unhandled Error", structured: true, problem: "multi-line value split from its record", unparsed: " err=<",
		},
		{
			name: "unstructured", line: "I0310 00:15:15.5 1 httplog.go:79] GET /api/v1/pods: (1.512ms) 200 [kubectl 10.0.0.1:5]",
			sev: SeverityInfo, time: time.Date(2026, 3, 10, 0, 15, 15, 500000000, time.UTC), thread: 1,
			file: "httplog.go", lineNo: 79, msg: "GET /api/v1/pods: (1.512ms) 200 [kubectl 10.0.0.1:5]",
		},
		{
			name: "quote-led Infof", line: `I0310 00:15:15 1 a.go:79] "x" is not found`,
			sev: SeverityInfo, time: time.Date(2026, 3, 10, 0, 15, 15, 0, time.UTC), thread: 1,
			file: "a.go", lineNo: 79, msg: `"x" is not found`,
		},
		{
			name: "partial after pairs", line: `F0310 00:15:15.000000 1 a.go:79] "boom" a="b" c="unterminated`,
			sev: SeverityFatal, time: time.Date(2026, 3, 10, 0, 15, 15, 0, time.UTC), thread: 1,
			file: "a.go", lineNo: 79, msg: "boom", structured: true, fields: []Field{kv("a", str("b"))},
			problem: "invalid value for key c", unparsed: ` c="unterminated`,
		},
		{
			name: "invalid date kept and flagged", line: `I1332 00:15:15.000000 1 a.go:79] "m"`,
			sev: SeverityInfo, thread: 1, file: "a.go", lineNo: 79, msg: "m", structured: true,
			problem: "invalid header date", unparsed: "I1332 00:15:15.000000 1 ",
		},
		{
			name: "kobjslice", line: `I0310 00:00:00.000000 1 a.go:1] "m" pods=["ns/a" "ns/b"] ok=true`,
			sev: SeverityInfo, time: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), thread: 1, file: "a.go", lineNo: 1,
			msg: "m", structured: true, fields: []Field{kv("pods", str(`["ns/a" "ns/b"]`)), kv("ok", boolean(true))},
		},
		{
			name: "no space after bracket, trailing CRLF", line: "I0310 00:00:00.000000 1 a.go:1]\"m\" k=\"v\"\r\n",
			sev: SeverityInfo, time: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), thread: 1, file: "a.go", lineNo: 1,
			msg: "m", structured: true, fields: []Field{kv("k", str("v"))},
		},
	}
	var p Parser
	var rec Record
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if f := p.Parse(tt.line, ref2026, &rec); f != FormatText {
				t.Fatalf("format = %v, want text", f)
			}
			if rec.Severity != tt.sev || rec.ThreadID != tt.thread || rec.File != tt.file || rec.Line != tt.lineNo {
				t.Errorf("header = %v %d %q %d", rec.Severity, rec.ThreadID, rec.File, rec.Line)
			}
			if rec.HasTime != !tt.time.IsZero() || !rec.Time.Equal(tt.time) {
				t.Errorf("time = %v (%v), want %v", rec.Time, rec.HasTime, tt.time)
			}
			if rec.Message != tt.msg || rec.Structured != tt.structured {
				t.Errorf("message = %q structured=%v, want %q %v", rec.Message, rec.Structured, tt.msg, tt.structured)
			}
			if (tt.err == nil) == rec.HasErr || (tt.err != nil && !reflect.DeepEqual(*tt.err, rec.Err)) {
				t.Errorf("err = %+v (%v), want %+v", rec.Err, rec.HasErr, tt.err)
			}
			if len(tt.fields) != 0 || len(rec.Fields) != 0 {
				if !reflect.DeepEqual(rec.Fields, tt.fields) {
					t.Errorf("fields = %+v\nwant %+v", rec.Fields, tt.fields)
				}
			}
			if rec.Problem != tt.problem || rec.Unparsed != tt.unparsed {
				t.Errorf("problem = %q %q, want %q %q", rec.Problem, rec.Unparsed, tt.problem, tt.unparsed)
			}
		})
	}
}

func TestNotKlog(t *testing.T) {
	lines := []string{
		"", "hello world", "I am a log line", "I0310 00:00:00.000000 1 a.go:x] m",
		"I0310 00:00:00.000000 a.go:1] m", "I0310 00:00:00.000000 1 a.go:1 m", "Ixx10 00:00:00 1 a.go:1] m",
		`{"msg":"no ts"}`, `{"ts":1,"msg":2}`, `{}`, `{"ts":1`, `[1,2]`, `{"level":"info","msg":"x"}`,
		"I0310 00:00:00.0000000000 1 a.go:1] ten fraction digits",
	}
	var p Parser
	var rec Record
	for _, l := range lines {
		if f := p.Parse(l, ref2026, &rec); f != FormatNone {
			t.Errorf("%q: format %v, want none", l, f)
		}
	}
}

func TestYearInference(t *testing.T) {
	tests := []struct {
		ref  time.Time
		line string
		want time.Time
	}{
		{time.Date(2027, 1, 1, 0, 0, 5, 0, time.UTC), "I1231 23:59:59.000000 1 a.go:1] m", time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)},
		{time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), "I0101 00:00:01.000000 1 a.go:1] m", time.Date(2027, 1, 1, 0, 0, 1, 0, time.UTC)},
		{time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC), "I0101 00:00:00.000000 1 a.go:1] m", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2028, 3, 1, 0, 0, 0, 0, time.UTC), "I0229 12:00:00.000000 1 a.go:1] m", time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC)},
		{time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), "I0129 03:26:19.857798 1 a.go:1] m", time.Date(2026, 1, 29, 3, 26, 19, 857798000, time.UTC)},
		{time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), "I1125 00:00:00.000000 1 a.go:1] skew", time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), "I1205 00:00:00.000000 1 a.go:1] m", time.Date(2025, 12, 5, 0, 0, 0, 0, time.UTC)},
	}
	var p Parser
	var rec Record
	for _, tt := range tests {
		p.Parse(tt.line, tt.ref, &rec)
		if !rec.HasTime || !rec.Time.Equal(tt.want) {
			t.Errorf("%s ref %v: got %v, want %v", tt.line, tt.ref, rec.Time, tt.want)
		}
	}
}

func TestZone(t *testing.T) {
	loc := time.FixedZone("UTC+2", 2*3600)
	p := Parser{Location: loc}
	var rec Record
	p.Parse("I0310 02:00:00.000000 1 a.go:1] m", ref2026, &rec)
	if want := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC); !rec.Time.Equal(want) {
		t.Errorf("got %v, want %v", rec.Time.UTC(), want)
	}
}

func TestParseJSON(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		sev     Severity
		time    time.Time
		v       int64
		hasV    bool
		msg     string
		file    string
		lineNo  int64
		err     *Value
		fields  []Field
		problem string
	}{
		{
			name: "component-base info", line: `{"ts":1580306777047.28,"caller":"scheduler/scheduler.go:715","msg":"Pod status updated","v":2,"pod":{"name":"nginx-1","namespace":"default"},"status":"ready"}`,
			sev: SeverityInfo, time: time.Unix(1580306777, 47280000), v: 2, hasV: true, msg: "Pod status updated",
			file: "scheduler/scheduler.go", lineNo: 715,
			fields: []Field{kv("pod", Value{Kind: KindMap, Items: []Field{kv("name", str("nginx-1")), kv("namespace", str("default"))}}), kv("status", str("ready"))},
		},
		{
			name: "error", line: `{"ts":1700000000000.5,"caller":"x.go:1","msg":"failed","err":"boom \u003cx\u003e","list":[1,"a",null,true,2.5],"empty":{}}` + "\n",
			sev: SeverityError, time: time.Unix(1700000000, 500000), msg: "failed", file: "x.go", lineNo: 1,
			err: &Value{Kind: KindString, Str: "boom <x>"},
			fields: []Field{
				kv("list", Value{Kind: KindSlice, Items: []Field{{Value: i64(1)}, {Value: str("a")}, {Value: Value{Kind: KindNull}}, {Value: boolean(true)}, {Value: f64(2.5)}}}),
				kv("empty", Value{Kind: KindMap}),
			},
		},
		{
			name: "ts out of range", line: `{"ts":1e300,"caller":"x.go:1","msg":"far","v":0}`,
			sev: SeverityInfo, hasV: true, msg: "far", file: "x.go", lineNo: 1, problem: "ts out of range",
		},
		{
			name: "truncated", line: `{"ts":1700000000000,"caller":"x.go:1","msg":"cut","v":0,"a":1,"b":"unterm`,
			sev: SeverityInfo, time: time.Unix(1700000000, 0), hasV: true, msg: "cut", file: "x.go", lineNo: 1,
			fields: []Field{kv("a", i64(1))}, problem: "invalid JSON",
		},
	}
	var p Parser
	var rec Record
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if f := p.Parse(tt.line, ref2026, &rec); f != FormatJSON {
				t.Fatalf("format = %v", f)
			}
			if rec.Severity != tt.sev || !rec.Time.Equal(tt.time) || rec.Verbosity != tt.v || rec.HasVerbose != tt.hasV {
				t.Errorf("got sev %v time %v v %d/%v", rec.Severity, rec.Time, rec.Verbosity, rec.HasVerbose)
			}
			if rec.Message != tt.msg || rec.File != tt.file || rec.Line != tt.lineNo {
				t.Errorf("got msg %q file %q line %d", rec.Message, rec.File, rec.Line)
			}
			if (tt.err == nil) == rec.HasErr || (tt.err != nil && !reflect.DeepEqual(*tt.err, rec.Err)) {
				t.Errorf("err = %+v, want %+v", rec.Err, tt.err)
			}
			if !reflect.DeepEqual(rec.Fields, tt.fields) && (len(rec.Fields) != 0 || len(tt.fields) != 0) {
				t.Errorf("fields = %+v\nwant %+v", rec.Fields, tt.fields)
			}
			if rec.Problem != tt.problem {
				t.Errorf("problem %q", rec.Problem)
			}
		})
	}
}

// TestJSONIsKlogOnlyWithItsOwnKeys: component-base JSON has a numeric ts, a caller and no level;
// other JSON logs with ts and msg (zap production, applications) are not klog unless zap is
// allowed, and logrus (time, no ts) never is.
func TestJSONIsKlogOnlyWithItsOwnKeys(t *testing.T) {
	zapLine := `{"level":"info","ts":1580306777.04728,"caller":"zapr@v0.1.1/zapr.go:69","msg":"HTTP","method":"GET","status":200}`
	tests := []struct {
		line    string
		zap     bool
		want    Format
		sev     Severity
		verbose int64
	}{
		{zapLine, false, FormatNone, SeverityUnset, -1},
		{zapLine, true, FormatZap, SeverityInfo, -1},
		{`{"level":"debug","ts":1580306777.1,"caller":"a.go:1","msg":"m"}`, true, FormatZap, SeverityDebug, -1},
		{`{"level":"Level(-2)","ts":1580306777.1,"caller":"a.go:1","msg":"m"}`, true, FormatZap, SeverityDebug, 2},
		{`{"level":"Level(-10)","ts":1580306777.1,"msg":"m"}`, true, FormatZap, SeverityDebug, 10},
		{`{"level":"warn","ts":1580306777.1,"msg":"m"}`, true, FormatZap, SeverityWarning, -1},
		{`{"level":"error","ts":"2026-03-10T00:00:00Z","msg":"m"}`, true, FormatZap, SeverityError, -1},
		{`{"level":"dpanic","ts":1580306777.1,"msg":"m"}`, true, FormatZap, SeverityFatal, -1},
		{`{"level":"nonsense","ts":1580306777.1,"msg":"m"}`, true, FormatZap, SeverityUnset, -1},
		{`{"level":"info","msg":"logrus","time":"2026-03-10T00:00:00Z"}`, true, FormatNone, SeverityUnset, -1},
		{`{"ts":1700000000000,"msg":"no caller"}`, false, FormatNone, SeverityUnset, -1},
		{`{"ts":"2026-03-10T00:00:00Z","caller":"a.go:1","msg":"string ts"}`, false, FormatNone, SeverityUnset, -1},
		{`{"ts":1700000000000,"caller":"a.go:1","msg":"klog","v":0}`, false, FormatJSON, SeverityInfo, 0},
		{`{"ts":1700000000000,"caller":"a.go:1","msg":"klog error"}`, true, FormatJSON, SeverityError, -1},
	}
	for _, tt := range tests {
		p := Parser{Zap: tt.zap}
		var rec Record
		got := p.Parse(tt.line, ref2026, &rec)
		if got != tt.want || rec.Severity != tt.sev {
			t.Errorf("%s (zap %v): format %v severity %v, want %v %v", tt.line, tt.zap, got, rec.Severity, tt.want, tt.sev)
		}
		if rec.HasVerbose {
			if rec.Verbosity != tt.verbose {
				t.Errorf("%s: verbosity %d, want %d", tt.line, rec.Verbosity, tt.verbose)
			}
		} else if tt.verbose != -1 {
			t.Errorf("%s: no verbosity, want %d", tt.line, tt.verbose)
		}
	}
}

func TestNestingLimit(t *testing.T) {
	line := `{"ts":1,"caller":"x.go:1","msg":"m","deep":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}"
	var p Parser
	var rec Record
	if f := p.Parse(line, ref2026, &rec); f != FormatJSON || !rec.Partial() {
		t.Errorf("format %v partial %v", f, rec.Partial())
	}
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		`I0310 00:15:15.525108       1 controller_utils.go:116] "Pod status updated" pod="kube-system/kubedns" status="ready"`,
		"I0310 00:00:00.000000 1 a.go:1] \"m\" one=<\n\tonly\n > two=<\n\ta\n\t\n\tb\n > n=3",
		`E0310 01:02:03.123456 7 r.go:158] "x" err="a\"b" f={"a":[1,{"b":"c"}]} g=["a" "b"]`,
		`{"ts":1580306777047.28,"caller":"s.go:7","msg":"m","v":2,"pod":{"name":"n","namespace":"d"},"x":[1,2.5e3,null]}`,
		`{"ts":"2026-03-10T00:00:00Z","msg":"\ud83d\ude00","err":{"a":1}}`,
		`{"ts":1618993461233.1785,"msg":"FLAG: --v=\"2\"\n","v":1}`,
		`{"v":0,"msg":"m","pod":{"name":"n"}}`,
		`{"ts":1619712345679.1,"msg":"m","err":"e"}`,
		`{"name":"a","hostname":"h","pid":1,"level":30,"msg":"m","time":"2024-05-01T12:00:00.000Z","v":0}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	var p Parser
	f.Fuzz(func(t *testing.T, line string) {
		var rec Record
		format := p.Parse(line, ref2026, &rec)
		if format == FormatNone && (rec.Message != "" || len(rec.Fields) != 0 || rec.Partial()) {
			t.Fatalf("not-klog line left data in the record: %+v", rec)
		}
		if rec.Partial() && format == FormatNone {
			t.Fatal("partial without format")
		}
		if format == FormatText && !strings.Contains(line, rec.File) {
			t.Fatalf("file %q not in line", rec.File)
		}
	})
}
