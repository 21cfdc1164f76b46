// SPDX-License-Identifier: Apache-2.0

package encoding

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

func record() plog.LogRecord {
	rec := plog.NewLogRecord()
	rec.SetTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 11, 22, 1, 2, 3, 456_000_000, time.UTC)))
	rec.SetSeverityText("ERROR")
	rec.SetSeverityNumber(plog.SeverityNumberError)
	rec.Body().SetStr("boom \"quoted\"\n\x01\xff")
	rec.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	rec.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	rec.Attributes().PutStr("log.iostream", "stderr")
	rec.Attributes().PutInt("n", 42)
	rec.Attributes().PutDouble("nan", math.NaN())
	rec.Attributes().PutEmptyBytes("b").FromRaw([]byte{0xde, 0xad})
	s := rec.Attributes().PutEmptySlice("s")
	s.AppendEmpty().SetBool(true)
	s.AppendEmpty()
	rec.Attributes().PutEmptyMap("m").PutStr("k", "v")
	return rec
}

// message returns AppendMessage's message unescaped, after checking that it is the content of
// a JSON string and that its size is the unescaped length.
func message(t testing.TB, f Format, res pcommon.Map, rec plog.LogRecord, extra Extra) string {
	t.Helper()
	out, size := AppendMessage(nil, f, res, rec, extra)
	var msg string
	if err := json.Unmarshal([]byte(`"`+string(out)+`"`), &msg); err != nil {
		t.Fatalf("not the content of a JSON string: %s: %v", out, err)
	}
	if size != len(msg) {
		t.Fatalf("size %d, want %d (the unescaped length) for %s", size, len(msg), out)
	}
	return msg
}

func TestJSON(t *testing.T) {
	res := pcommon.NewMap()
	res.PutStr("k8s.node.name", "node-1")
	got := message(t, JSON, res, record(), Extra{Key: "log.type", Value: "application"})
	var m map[string]any
	if err := json.Unmarshal([]byte(got), &m); err != nil {
		t.Fatalf("invalid JSON %s: %v", got, err)
	}
	want := map[string]any{
		"timestamp":       "2026-11-22T01:02:03.456Z",
		"severity_text":   "ERROR",
		"severity_number": float64(17),
		"body":            "boom \"quoted\"\n\x01\ufffd",
		"trace_id":        "0102030405060708090a0b0c0d0e0f10",
		"span_id":         "0102030405060708",
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %#v, want %#v", k, m[k], v)
		}
	}
	a := m["attributes"].(map[string]any)
	if _, ok := a["log.type"]; ok || a["n"] != float64(42) || a["nan"] != "NaN" || a["b"] != "3q0=" ||
		a["m"].(map[string]any)["k"] != "v" || len(a["s"].([]any)) != 2 {
		t.Errorf("attributes = %#v", a)
	}
	if r := m["resource"].(map[string]any); r["k8s.node.name"] != "node-1" || r["log.type"] != "application" {
		t.Errorf("resource = %#v", m["resource"])
	}
}

// The routed type is a resource attribute: it goes into the message's resource, replacing the
// resource's own value, and a record attribute of the same name (log content) stays as it is
// without hiding it.
func TestJSONWritesTypeIntoResourceAndOmitsEmpty(t *testing.T) {
	rec := plog.NewLogRecord()
	rec.Attributes().PutStr("log.type", "audit")
	got := message(t, JSON, pcommon.NewMap(), rec, Extra{Key: "log.type", Value: "application"})
	if got != `{"attributes":{"log.type":"audit"},"resource":{"log.type":"application"}}` {
		t.Fatalf("got %s", got)
	}
	res := pcommon.NewMap()
	res.PutStr("log.type", "nonsense")
	res.PutStr("host.name", "n")
	got = message(t, JSON, res, plog.NewLogRecord(), Extra{Key: "log.type", Value: "application"})
	if got != `{"resource":{"host.name":"n","log.type":"application"}}` {
		t.Fatalf("got %s", got)
	}
}

// The message is written escaped for the body it travels in: the document's own quotes once,
// the strings inside it twice, and its size is the document's length.
func TestMessageIsWrittenEscaped(t *testing.T) {
	rec := plog.NewLogRecord()
	rec.Body().SetStr("a\"b\\c\n\x01\xffé")
	rec.Attributes().PutInt("n", 7)
	out, size := AppendMessage([]byte("pre"), JSON, pcommon.NewMap(), rec, Extra{})
	want := `pre{\"body\":\"a\\\"b\\\\c\\n\\u0001` + "\ufffdé" + `\",\"attributes\":{\"n\":7}}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	doc := `{"body":"a\"b\\c\n\u0001` + "\ufffdé" + `","attributes":{"n":7}}`
	if size != len(doc) {
		t.Fatalf("size %d, want %d", size, len(doc))
	}
	out, size = AppendMessage(nil, Raw, pcommon.NewMap(), rec, Extra{})
	if want := `a\"b\\c\n\u0001` + "\ufffdé"; string(out) != want || size != len("a\"b\\c\n\x01\ufffdé") {
		t.Fatalf("raw: got %s (%d)", out, size)
	}
}

func TestRaw(t *testing.T) {
	rec := plog.NewLogRecord()
	rec.Body().SetStr("plain line")
	if got := message(t, Raw, pcommon.NewMap(), rec, Extra{}); got != "plain line" {
		t.Fatalf("got %q", got)
	}
	rec.Body().SetEmptyMap().PutInt("a", 1)
	if got := message(t, Raw, pcommon.NewMap(), rec, Extra{}); got != `{"a":1}` {
		t.Fatalf("got %q", got)
	}
}

func FuzzJSONString(f *testing.F) {
	f.Add("plain")
	f.Add("\x00\"\\\xff\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		rec := plog.NewLogRecord()
		rec.Body().SetStr(s)
		rec.Attributes().PutStr(s, s)
		out := message(t, JSON, pcommon.NewMap(), rec, Extra{})
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("invalid JSON for %q: %s", s, out)
		}
		if want := string([]rune(s)); m["body"] != want || m["attributes"].(map[string]any)[want] != want {
			t.Fatalf("body and attribute of %q come back as %s", s, out)
		}
	})
}

func BenchmarkJSON(b *testing.B) {
	res := pcommon.NewMap()
	res.PutStr("k8s.node.name", "node-1")
	rec := record()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendMessage(buf[:0], JSON, res, rec, Extra{Key: "log.type", Value: "application"})
	}
}

// A raw message with invalid UTF-8 is sized as CloudWatch stores it: every invalid byte
// becomes U+FFFD (3 bytes) before the batcher measures it, so 1 MiB of invalid bytes cannot
// grow past the event limit after the body's JSON escaping replaced them.
func TestRawMessageIsValidUTF8BeforeSizing(t *testing.T) {
	rec := plog.NewLogRecord()
	rec.Body().SetStr("a\xffb\xc3")
	got := message(t, Raw, pcommon.NewMap(), rec, Extra{})
	if want := "a\uFFFDb\uFFFD"; got != want {
		t.Fatalf("raw message = %q, want %q", got, want)
	}
	rec.Body().SetStr(strings.Repeat("\xff", 1000))
	if n := len(message(t, Raw, pcommon.NewMap(), rec, Extra{})); n != 3000 {
		t.Fatalf("1000 invalid bytes sized as %d bytes, want 3000", n)
	}
}
