// SPDX-License-Identifier: Apache-2.0

package criline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC3339Nano in UTC, or "" for an error
	}{
		{"2016-10-06T00:17:09.669794202Z", "2016-10-06T00:17:09.669794202Z"},
		{"2016-10-06T00:17:09Z", "2016-10-06T00:17:09Z"},
		{"2016-10-06T00:17:09.5Z", "2016-10-06T00:17:09.5Z"},
		{"2024-02-29T23:59:59.000000001+02:00", "2024-02-29T21:59:59.000000001Z"},
		{"2023-12-31T23:30:00.123-01:30", "2024-01-01T01:00:00.123Z"},
		{"1969-12-31T23:59:59.9Z", "1969-12-31T23:59:59.9Z"},
		{"2016-10-06t00:17:09z", "2016-10-06T00:17:09Z"},
		{"2023-02-29T00:00:00Z", ""},
		{"2016-13-06T00:17:09Z", ""},
		{"2016-10-06T24:17:09Z", ""},
		{"2016-10-06T00:17:09.Z", ""},
		{"2016-10-06T00:17:09.1234567890Z", ""},
		{"2016-10-06T00:17:09", ""},
		{"2016-10-06T00:17:09+0200", ""},
		{"2016-10-06 00:17:09Z", ""},
		{"2016-10-06T00:17:09Zx", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTime([]byte(tt.in))
			if tt.want == "" {
				if err == nil {
					t.Fatalf("want error, got %d", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := time.Unix(0, got).UTC().Format(time.RFC3339Nano); s != tt.want {
				t.Fatalf("got %s want %s", s, tt.want)
			}
		})
	}
}

func TestParseTimeMatchesStdlib(t *testing.T) {
	base := time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 20000; i++ {
		tm := base.Add(time.Duration(i) * 7919 * time.Minute).Add(time.Duration(i*104729) * time.Nanosecond)
		for _, loc := range []*time.Location{time.UTC, time.FixedZone("x", -5*3600-30*60), time.FixedZone("y", 9*3600)} {
			s := tm.In(loc).Format(time.RFC3339Nano)
			got, err := ParseTime([]byte(s))
			if err != nil || got != tm.UnixNano() {
				t.Fatalf("%s: got %d %v want %d", s, got, err, tm.UnixNano())
			}
		}
	}
}

// A Line keeps the last timestamp's second: lines of one file that stay in a second, change
// their offset, turn invalid and come back are each parsed as on their own.
func TestParseCRIKeepsTheLastSecond(t *testing.T) {
	steps := []struct {
		line    string
		want    int64 // UnixNano
		wantErr bool
	}{
		{line: "2026-11-26T20:31:54.1Z stdout F a", want: 1795725114_100_000_000},
		{line: "2026-11-26T20:31:54.25Z stdout F b", want: 1795725114_250_000_000},
		{line: "2026-11-26T20:31:54Z stdout F c", want: 1795725114_000_000_000},
		{line: "2026-11-26T20:31:54.5+01:00 stdout F d", want: 1795721514_500_000_000},
		{line: "2026-11-26T20:31:54 stdout F e", wantErr: true},
		{line: "2026-11-26T20:31:54.Z stdout F f", wantErr: true},
		{line: "2026-02-30T20:31:54Z stdout F g", wantErr: true},
		{line: "2026-11-26T20:31:54.000000001Z stdout F h", want: 1795725114_000_000_001},
		{line: "2026-11-26T20:31:55Z stdout F i", want: 1795725115_000_000_000},
		{line: "2026-11-26t20:31:55Z stdout F j", want: 1795725115_000_000_000},
	}
	var l Line
	for i, st := range steps {
		err := ParseCRI([]byte(st.line), &l)
		if st.wantErr {
			if err == nil {
				t.Errorf("step %d (%s): no error", i, st.line)
			}
			continue
		}
		if err != nil || l.Time != st.want {
			t.Errorf("step %d (%s): time %d, %v; want %d", i, st.line, l.Time, err, st.want)
		}
	}
}

func TestParseCRI(t *testing.T) {
	tests := []struct {
		in      string
		stream  Stream
		partial bool
		tags    string
		content string
		err     error
	}{
		{in: "2016-10-06T00:17:09.669794202Z stdout F The content", stream: Stdout, content: "The content"},
		{in: "2016-10-06T00:17:09.669794202Z stderr P part", stream: Stderr, partial: true, content: "part"},
		{in: "2016-10-06T00:17:09.669794202+02:00 stdout F x", stream: Stdout, content: "x"},
		{in: "2016-10-06T00:17:09Z stdout F  two  spaces  ", stream: Stdout, content: " two  spaces  "},
		{in: "2016-10-06T00:17:09Z stdout F ", stream: Stdout, content: ""},
		{in: "2016-10-06T00:17:09Z stdout F", stream: Stdout, content: ""},
		{in: "2016-10-06T00:17:09Z stdout P:x:y=1 c", stream: Stdout, partial: true, tags: "x:y=1", content: "c"},
		{in: "2016-10-06T00:17:09Z stdout F:a tab\there", stream: Stdout, tags: "a", content: "tab\there"},
		{in: "2016-10-06T00:17:09Z stdout X c", err: ErrTag},
		{in: "2016-10-06T00:17:09Z stdout FF c", err: ErrTag},
		{in: "2016-10-06T00:17:09Z stdout  c", err: ErrTag},
		{in: "2016-10-06T00:17:09Z stdin F c", err: ErrStream},
		{in: "2016-10-06T00:17:09Z stdout", err: ErrStream},
		{in: "yesterday stdout F c", err: ErrTimestamp},
		{in: "no-spaces-at-all", err: ErrFormat},
		{in: "", err: ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var l Line
			err := ParseCRI([]byte(tt.in), &l)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if l.Stream != tt.stream || l.Partial != tt.partial || string(l.Tags) != tt.tags || string(l.Content) != tt.content {
				t.Fatalf("got %+v (content %q tags %q)", l, l.Content, l.Tags)
			}
		})
	}
}

func TestParseDocker(t *testing.T) {
	tests := []struct {
		in      string
		stream  Stream
		partial bool
		content string
		ok      bool
	}{
		{`{"log":"hello\n","stream":"stdout","time":"2016-10-05T00:00:30.082640485Z"}`, Stdout, false, "hello", true},
		{`{"log":"par","stream":"stderr","time":"2016-10-05T00:00:30.082640485Z"}`, Stderr, true, "par", true},
		{` { "time" : "2016-10-05T00:00:30Z" , "stream":"stdout", "log":"a\"b\\c\u003cd\u00e9\ud83d\ude00\n" } `, Stdout, false, "a\"b\\c<dé😀", true},
		{`{"log":"x\n","attrs":{"a":[1,2,{"b":null}],"c":"}"},"stream":"stdout","n":-1.5e3,"t":true,"time":"2016-10-05T00:00:30Z"}`, Stdout, false, "x", true},
		{`{"log":"lone \ud800 surrogate\n","stream":"stdout","time":"2016-10-05T00:00:30Z"}`, Stdout, false, "lone \uFFFD surrogate", true},
		{`{"log":"\n","stream":"stdout","time":"2016-10-05T00:00:30Z"}`, Stdout, false, "", true},
		{`{"l\u006fg":"k\n","stream":"stdout","time":"2016-10-05T00:00:30Z"}`, Stdout, false, "k", true},
		{`{"log":"x\n","stream":"stdout"}`, 0, false, "", false},
		{`{"log":"x\n","stream":"other","time":"2016-10-05T00:00:30Z"}`, 0, false, "", false},
		{`{"log":"x\n","stream":"stdout","time":"2016-10-05T00:00:30Z"`, 0, false, "", false},
		{`{"log":"x\n","stream":"stdout","time":"2016-10-05T00:00:30Z"} trailing`, 0, false, "", false},
		{`{"log":"bad \q","stream":"stdout","time":"2016-10-05T00:00:30Z"}`, 0, false, "", false},
		{`{"log":1,"stream":"stdout","time":"2016-10-05T00:00:30Z"}`, 0, false, "", false},
		{`{"log":"x","n":tru,"stream":"stdout","time":"2016-10-05T00:00:30Z"}`, 0, false, "", false},
		{`[]`, 0, false, "", false},
	}
	var p DockerParser
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var l Line
			err := p.Parse([]byte(tt.in), &l)
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok=%v", err, tt.ok)
			}
			if !tt.ok {
				return
			}
			if l.Stream != tt.stream || l.Partial != tt.partial || string(l.Content) != tt.content {
				t.Fatalf("got stream %v partial %v content %q", l.Stream, l.Partial, l.Content)
			}
		})
	}
}

// TestGolden parses every testdata/*.log file line by line with the parser its name selects
// and compares a readable dump with the .golden file beside it.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.log")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			var dp DockerParser
			sc := bufio.NewScanner(bytes.NewReader(in))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var l Line
				if strings.Contains(f, "docker") {
					err = dp.Parse(sc.Bytes(), &l)
				} else {
					err = ParseCRI(sc.Bytes(), &l)
				}
				if err != nil {
					fmt.Fprintf(&out, "error %v\n", err)
					continue
				}
				fmt.Fprintf(&out, "%s %s partial=%v tags=%q content=%q\n",
					time.Unix(0, l.Time).UTC().Format(time.RFC3339Nano), l.Stream, l.Partial, l.Tags, l.Content)
			}
			golden := strings.TrimSuffix(f, ".log") + ".golden"
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("output differs from %s:\n%s", golden, out.String())
			}
		})
	}
}

func FuzzParseCRI(f *testing.F) {
	f.Add([]byte("2016-10-06T00:17:09.669794202Z stdout F The content"))
	f.Add([]byte("2016-10-06T00:17:09.669794202+02:00 stderr P:x:y part"))
	f.Add([]byte("2016-10-06T00:17:09Z stdout F"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var l Line
		if err := ParseCRI(b, &l); err != nil {
			return
		}
		// Parsed again into the same Line (its second kept), the same time.
		first := l.Time
		if err := ParseCRI(b, &l); err != nil || l.Time != first {
			t.Fatalf("second parse: %d, %v; first %d", l.Time, err, first)
		}
		if l.Stream != Stdout && l.Stream != Stderr {
			t.Fatalf("bad stream %v", l.Stream)
		}
		// The content is always a suffix of the line: nothing is invented or reordered.
		if !bytes.HasSuffix(b, l.Content) {
			t.Fatalf("content %q not a suffix of %q", l.Content, b)
		}
		// The timestamp agrees with the standard library.
		ts := b[:bytes.IndexByte(b, ' ')]
		if want, err := time.Parse(time.RFC3339Nano, string(ts)); err == nil && want.UnixNano() != l.Time {
			t.Fatalf("time %s: got %d want %d", ts, l.Time, want.UnixNano())
		}
	})
}

func FuzzParseDocker(f *testing.F) {
	f.Add([]byte(`{"log":"hello\n","stream":"stdout","time":"2016-10-05T00:00:30.082640485Z"}`))
	f.Add([]byte(`{"log":"a\u00e9\ud83d\ude00","stream":"stderr","attrs":{"x":[1]},"time":"2016-10-05T00:00:30Z"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p DockerParser
		var l Line
		if err := p.Parse(b, &l); err != nil {
			return
		}
		// Whatever we accept, encoding/json must accept too and agree on the "log" value
		// (for valid UTF-8 input, where the two decoders are specified to agree).
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("accepted %q that encoding/json rejects: %v", b, err)
		}
		logv, _ := v["log"].(string)
		want := strings.TrimSuffix(logv, "\n")
		if bytes.ContainsAny(b, "\\") || !json.Valid(b) {
			return
		}
		if string(l.Content) != want && strings.ToValidUTF8(string(l.Content), "\uFFFD") == string(l.Content) {
			t.Fatalf("content %q want %q", l.Content, want)
		}
	})
}

func BenchmarkParseCRI(b *testing.B) {
	line := []byte("2024-05-01T10:11:12.123456789Z stdout F I0501 10:11:12.123456 1 controller.go:123] \"Reconciled object\" object=\"default/my-deployment-7c9d8f\" duration=\"1.2ms\"")
	b.SetBytes(int64(len(line)))
	var l Line
	for b.Loop() {
		if err := ParseCRI(line, &l); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseDocker(b *testing.B) {
	line := []byte(`{"log":"I0501 10:11:12.123456 1 controller.go:123] \"Reconciled object\" object=\"default/my-deployment\"\n","stream":"stdout","time":"2024-05-01T10:11:12.123456789Z"}`)
	b.SetBytes(int64(len(line)))
	var p DockerParser
	var l Line
	for b.Loop() {
		if err := p.Parse(line, &l); err != nil {
			b.Fatal(err)
		}
	}
}
