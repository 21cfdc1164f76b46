// SPDX-License-Identifier: Apache-2.0

package klogline_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	jsonlog "k8s.io/component-base/logs/json"
	"k8s.io/klog/v2"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor/internal/klogline"
)

// The round-trip tests write records with the real klog text logger and the real
// component-base JSON logger, parse them back and compare every field with what was logged.

const roundTrips = 1500

// pod satisfies klog.KMetadata.
type pod struct{ name, namespace string }

func (p pod) GetName() string      { return p.name }
func (p pod) GetNamespace() string { return p.namespace }

type nested struct {
	Name   string         `json:"name"`
	Count  int            `json:"count"`
	Ready  bool           `json:"ready"`
	Labels map[string]any `json:"labels,omitempty"`
	List   []int          `json:"list"`
}

// logged is one generated key/value pair and what the parser must return for it.
type logged struct {
	key   string
	value any
}

type gen struct{ r *rand.Rand }

// text returns a random string mixing ASCII, quotes, backslashes, control characters,
// multi-byte runes, invalid UTF-8 and (when lines) line breaks.
func (g gen) text(lines bool) string {
	pieces := []string{"a", "Pod", " ", "kube-system/coredns", `"`, `\`, "\t", "é", "日本", "😀", "=", "<", ">", "{", "}", "[", "]", "\x00", "\x7f", "\u2028", ":", "%", "'", "\xff"}
	if lines {
		pieces = append(pieces, "\n", "\n", " >", "\n\t")
	}
	var b strings.Builder
	for n := g.r.IntN(12); n > 0; n-- {
		b.WriteString(pieces[g.r.IntN(len(pieces))])
	}
	return b.String()
}

func (g gen) key(i int) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
	var b strings.Builder
	b.WriteByte(chars[g.r.IntN(52)])
	for n := g.r.IntN(8); n > 0; n-- {
		b.WriteByte(chars[g.r.IntN(len(chars))])
	}
	fmt.Fprintf(&b, "%d", i) // unique: klog de-duplicates keys
	return b.String()
}

func (g gen) dnsName() string {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789-"
	var b strings.Builder
	b.WriteByte('a' + byte(g.r.IntN(26)))
	for n := g.r.IntN(20); n > 0; n-- {
		b.WriteByte(chars[g.r.IntN(len(chars))])
	}
	return b.String()
}

func (g gen) value() any {
	switch g.r.IntN(16) {
	case 0:
		return g.text(false)
	case 1:
		return g.text(true)
	case 2:
		return g.r.Int64() - g.r.Int64()
	case 3:
		return g.r.IntN(1000)
	case 4:
		return uint64(math.MaxInt64) + g.r.Uint64N(1000)
	case 5:
		f := (g.r.Float64() - 0.5) * math.Pow(10, float64(g.r.IntN(60)-30))
		return f
	case 6:
		return g.r.IntN(2) == 0
	case 7:
		return errors.New(g.text(g.r.IntN(2) == 0))
	case 8:
		ns := ""
		if g.r.IntN(3) > 0 {
			ns = g.dnsName()
		}
		return klog.KObj(pod{name: g.dnsName(), namespace: ns})
	case 9:
		return []byte(g.text(false))
	case 10:
		return time.Duration(g.r.Int64N(int64(time.Hour)))
	case 11:
		return nested{Name: g.text(false), Count: g.r.IntN(100), Ready: true, List: []int{1, 2}, Labels: map[string]any{"app": g.dnsName()}}
	case 12:
		return nil
	case 13:
		return []string{g.text(false), g.dnsName()}
	case 14:
		return map[string]int{g.dnsName(): g.r.IntN(10), "z" + g.dnsName(): -1}
	default:
		return float64(g.r.IntN(100)) // integral float
	}
}

func (g gen) pairs() ([]any, []logged) {
	var kvs []any
	var want []logged
	for i := g.r.IntN(7); i > 0; i-- {
		k, v := g.key(i), g.value()
		kvs = append(kvs, k, v)
		want = append(want, logged{k, v})
	}
	return kvs, want
}

var klogFlags = func() *flag.FlagSet {
	fs := flag.NewFlagSet("klog", flag.PanicOnError)
	klog.InitFlags(fs)
	for k, v := range map[string]string{"logtostderr": "false", "one_output": "true", "stderrthreshold": "FATAL", "v": "10"} {
		if err := fs.Set(k, v); err != nil {
			panic(err)
		}
	}
	return fs
}()

func TestRoundTripText(t *testing.T) {
	_ = klogFlags
	var buf bytes.Buffer
	klog.SetOutput(&buf)
	defer klog.SetOutput(os.Stderr)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	g := gen{rand.New(rand.NewPCG(seed, 1))}
	var p klogline.Parser
	var rec klogline.Record
	for n := 0; n < roundTrips; n++ {
		msg := g.text(g.r.IntN(4) == 0)
		kvs, want := g.pairs()
		var err error
		if g.r.IntN(3) == 0 {
			err = errors.New(g.text(g.r.IntN(3) == 0))
		}
		buf.Reset()
		before := time.Now().Truncate(time.Microsecond)
		sev := klogline.SeverityInfo
		unstructured := false
		switch g.r.IntN(4) {
		case 0:
			sev = klogline.SeverityError
			klog.ErrorS(err, msg, kvs...)
		case 1:
			unstructured = true
			sev = klogline.SeverityWarning
			klog.Warningf("%s", msg)
		default:
			err = nil
			klog.InfoS(msg, kvs...)
		}
		after := time.Now()
		line := buf.String()
		if f := p.Parse(line, after, &rec); f != klogline.FormatText {
			t.Fatalf("line %q: format %v", line, f)
		}
		where := fmt.Sprintf("line %q", line)
		if rec.Severity != sev || rec.ThreadID != int64(os.Getpid()) || rec.File != "roundtrip_test.go" || rec.Line == 0 {
			t.Fatalf("%s: header %v %d %s:%d", where, rec.Severity, rec.ThreadID, rec.File, rec.Line)
		}
		if !rec.HasTime || rec.Time.Before(before) || rec.Time.After(after) {
			t.Fatalf("%s: time %v not in [%v, %v]", where, rec.Time, before, after)
		}
		if rec.Partial() {
			t.Fatalf("%s: partial: %s at %q", where, rec.Problem, rec.Unparsed)
		}
		if unstructured {
			// klog adds a line break unless the message ends with one; both read back alike.
			msg = strings.TrimSuffix(msg, "\n")
			if inner, err := strconv.Unquote(msg); err == nil && strconv.Quote(inner) == msg {
				// Infof("%s", strconv.Quote(x)) is byte for byte InfoS(x): it reads as structured.
				if rec.Message != inner || !rec.Structured {
					t.Fatalf("%s: message %q, want %q", where, rec.Message, inner)
				}
				continue
			}
			if rec.Message != msg || rec.Structured {
				t.Fatalf("%s: message %q, want %q", where, rec.Message, msg)
			}
			continue
		}
		if rec.Message != msg || !rec.Structured {
			t.Fatalf("%s: message %q, want %q", where, rec.Message, msg)
		}
		checkPairs(t, where, &rec, err, want, checkText)
	}
}

// checkPairs compares the error and the key/value pairs of rec with what was logged.
func checkPairs(t *testing.T, where string, rec *klogline.Record, err error, want []logged, check func(klogline.Value, any) string) {
	t.Helper()
	if err != nil {
		if !rec.HasErr {
			t.Fatalf("%s: no err, want %q", where, err.Error())
		}
		if msg := check(rec.Err, err); msg != "" {
			t.Fatalf("%s: err: %s", where, msg)
		}
	} else if rec.HasErr {
		t.Fatalf("%s: unexpected err %+v", where, rec.Err)
	}
	if len(rec.Fields) != len(want) {
		t.Fatalf("%s: %d fields, want %d: %+v", where, len(rec.Fields), len(want), rec.Fields)
	}
	for i, w := range want {
		f := rec.Fields[i]
		if f.Key != w.key {
			t.Fatalf("%s: key %d = %q, want %q", where, i, f.Key, w.key)
		}
		if msg := check(f.Value, w.value); msg != "" {
			t.Fatalf("%s: key %q: %s", where, w.key, msg)
		}
	}
}

// textString is what the text format can carry of a string: klog's multi-line form cannot
// tell whether the string ended with a line break.
func textString(s string) string {
	if strings.Contains(s, "\n") {
		return strings.TrimSuffix(s, "\n")
	}
	return s
}

func checkText(got klogline.Value, v any) string {
	wantStr := func(s string) string {
		if got.Kind != klogline.KindString || got.Str != s {
			return fmt.Sprintf("got %+v, want string %q", got, s)
		}
		return ""
	}
	switch v := v.(type) {
	case string:
		return wantStr(textString(v))
	case error:
		return wantStr(textString(v.Error()))
	case fmt.Stringer:
		return wantStr(textString(v.String()))
	case []byte:
		return wantStr(string(v))
	case int, int64, uint64, float64, bool, nil:
		return checkScalar(got, v)
	case nested, []string, map[string]int:
		js, _ := json.Marshal(v)
		return wantStr(string(js))
	default:
		return fmt.Sprintf("test bug: unhandled %T", v)
	}
}

// checkScalar compares numbers, booleans and nil, which both formats write as JSON.
func checkScalar(got klogline.Value, v any) string {
	switch v := v.(type) {
	case int:
		return wantInt(got, int64(v))
	case int64:
		return wantInt(got, v)
	case uint64:
		if v <= math.MaxInt64 {
			return wantInt(got, int64(v))
		}
		if got.Kind != klogline.KindString || got.Str != strconv.FormatUint(v, 10) {
			return fmt.Sprintf("got %+v, want digits %d", got, v)
		}
	case float64:
		return wantNumber(got, v)
	case bool:
		if got.Kind != klogline.KindBool || got.Bool != v {
			return fmt.Sprintf("got %+v, want %v", got, v)
		}
	case nil:
		if got.Kind != klogline.KindNull {
			return fmt.Sprintf("got %+v, want null", got)
		}
	}
	return ""
}

func wantInt(got klogline.Value, v int64) string {
	if got.Kind != klogline.KindInt || got.Int != v {
		return fmt.Sprintf("got %+v, want int %d", got, v)
	}
	return ""
}

// wantNumber accepts the forms a float64 takes after JSON encoding: an int for integral
// values, a string of exact digits beyond int64, otherwise a double.
func wantNumber(got klogline.Value, v float64) string {
	var f float64
	switch got.Kind {
	case klogline.KindDouble:
		f = got.Double
	case klogline.KindInt:
		f = float64(got.Int)
	case klogline.KindString:
		var err error
		if f, err = strconv.ParseFloat(got.Str, 64); err != nil {
			return fmt.Sprintf("got %+v, want number %v", got, v)
		}
	default:
		return fmt.Sprintf("got %+v, want number %v", got, v)
	}
	if f != v {
		return fmt.Sprintf("got %+v, want number %v", got, v)
	}
	return ""
}

func TestRoundTripJSON(t *testing.T) {
	_ = klogFlags
	var buf bytes.Buffer
	logger, _ := jsonlog.NewJSONLogger(10, jsonlog.AddNopSync(&buf), nil, nil)
	klog.SetLogger(logger)
	defer klog.ClearLogger()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	g := gen{rand.New(rand.NewPCG(seed, 2))}
	var p klogline.Parser
	var rec klogline.Record
	for n := 0; n < roundTrips; n++ {
		msg := g.text(g.r.IntN(4) == 0)
		kvs, want := g.pairs()
		var err error
		if g.r.IntN(3) == 0 {
			err = errors.New(g.text(g.r.IntN(3) == 0))
		}
		buf.Reset()
		before := time.Now().Add(-time.Microsecond)
		sev := klogline.SeverityInfo
		verbosity := int64(0)
		switch g.r.IntN(3) {
		case 0:
			sev = klogline.SeverityError
			klog.ErrorS(err, msg, kvs...)
		case 1:
			err = nil
			verbosity = int64(g.r.IntN(6))
			klog.V(klog.Level(verbosity)).InfoS(msg, kvs...)
		default:
			err = nil
			klog.InfoS(msg, kvs...)
		}
		after := time.Now().Add(time.Microsecond)
		line := buf.String()
		if f := p.Parse(line, after, &rec); f != klogline.FormatJSON {
			t.Fatalf("line %q: format %v", line, f)
		}
		where := fmt.Sprintf("line %q", line)
		if rec.Partial() {
			t.Fatalf("%s: partial: %s at %q", where, rec.Problem, rec.Unparsed)
		}
		if rec.Severity != sev || rec.File != "klogline/roundtrip_test.go" || rec.Line == 0 {
			t.Fatalf("%s: severity %v caller %s:%d", where, rec.Severity, rec.File, rec.Line)
		}
		if sev == klogline.SeverityInfo && (!rec.HasVerbose || rec.Verbosity != verbosity) {
			t.Fatalf("%s: verbosity %d/%v, want %d", where, rec.Verbosity, rec.HasVerbose, verbosity)
		}
		if !rec.HasTime || rec.Time.Before(before) || rec.Time.After(after) {
			t.Fatalf("%s: time %v not in [%v, %v]", where, rec.Time, before, after)
		}
		if rec.Message != validUTF8(msg) {
			t.Fatalf("%s: message %q, want %q", where, rec.Message, msg)
		}
		checkPairs(t, where, &rec, err, want, checkJSON)
	}
}

// validUTF8 is what zap can carry of a string: each invalid byte becomes U+FFFD.
func validUTF8(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

func checkJSON(got klogline.Value, v any) string {
	wantStr := func(s string) string {
		if got.Kind != klogline.KindString || got.Str != s {
			return fmt.Sprintf("got %+v, want string %q", got, s)
		}
		return ""
	}
	switch v := v.(type) {
	case string:
		return wantStr(validUTF8(v))
	case error:
		return wantStr(validUTF8(v.Error()))
	case klog.ObjectRef:
		items := []klogline.Field{{Key: "name", Value: klogline.Value{Kind: klogline.KindString, Str: v.Name}}}
		if v.Namespace != "" {
			items = append(items, klogline.Field{Key: "namespace", Value: klogline.Value{Kind: klogline.KindString, Str: v.Namespace}})
		}
		if got.Kind != klogline.KindMap || fmt.Sprint(got.Items) != fmt.Sprint(items) {
			return fmt.Sprintf("got %+v, want object %+v", got, items)
		}
	case time.Duration:
		return wantStr(v.String())
	case []byte:
		return wantStr(base64.StdEncoding.EncodeToString(v))
	case int, int64, uint64, float64, bool, nil:
		return checkScalar(got, v)
	case []string:
		if got.Kind != klogline.KindSlice || len(got.Items) != len(v) {
			return fmt.Sprintf("got %+v, want array %q", got, v)
		}
		for i, e := range v {
			if m := checkJSON(got.Items[i].Value, e); m != "" {
				return fmt.Sprintf("element %d: %s", i, m)
			}
		}
	case map[string]int:
		if got.Kind != klogline.KindMap || len(got.Items) != len(v) {
			return fmt.Sprintf("got %+v, want object %v", got, v)
		}
		for _, f := range got.Items {
			want, ok := v[f.Key]
			if !ok {
				return fmt.Sprintf("unexpected member %q", f.Key)
			}
			if m := wantInt(f.Value, int64(want)); m != "" {
				return f.Key + ": " + m
			}
		}
	case nested:
		if got.Kind != klogline.KindMap || len(got.Items) != 5 {
			return fmt.Sprintf("got %+v, want object of 5", got)
		}
		want := []string{"name", "count", "ready", "labels", "list"}
		for i, k := range want {
			if got.Items[i].Key != k {
				return fmt.Sprintf("got key %q, want %q", got.Items[i].Key, k)
			}
		}
		if m := checkJSON(got.Items[0].Value, v.Name); m != "" {
			return "name: " + m
		}
		if m := wantInt(got.Items[1].Value, int64(v.Count)); m != "" {
			return "count: " + m
		}
		l := got.Items[3].Value
		if l.Kind != klogline.KindMap || len(l.Items) != 1 || l.Items[0].Key != "app" || l.Items[0].Value.Str != v.Labels["app"] {
			return fmt.Sprintf("labels: got %+v", l)
		}
		s := got.Items[4].Value
		if s.Kind != klogline.KindSlice || len(s.Items) != 2 || s.Items[1].Value.Int != 2 {
			return fmt.Sprintf("list: got %+v", s)
		}
	default:
		return fmt.Sprintf("test bug: unhandled %T", v)
	}
	return ""
}
