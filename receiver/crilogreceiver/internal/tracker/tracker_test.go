// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func testTracker(t *testing.T, root string, known []State, first, atEnd bool) *Tracker {
	t.Helper()
	return New(Config{
		Include:    []string{filepath.Join(root, "*", "*", "*.log")},
		StartAtEnd: atEnd,
		Read:       ReadConfig{FingerprintSize: 64, MaxLogSize: 1024, MaxBytesPerRead: 4096, FlushTimeout: 1e9, MultilineFlushTimeout: 1e9},
	}, known, first)
}

func writeFile(t *testing.T, path, content string, appendTo bool) {
	t.Helper()
	require(t, os.MkdirAll(filepath.Dir(path), 0o755))
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	require(t, err)
	_, err = f.WriteString(content)
	require(t, err)
	require(t, f.Close())
}

func require(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func line(i int) string {
	return fmt.Sprintf("2024-05-01T10:00:00.%09dZ stdout F line %d\n", i, i)
}

// readAll gives every reader turns until nothing changes and returns the bodies.
func readAll(t *testing.T, tr *Tracker, close bool) []string {
	t.Helper()
	var out []string
	for i := 0; i < 100; i++ {
		progress := false
		for _, r := range append([]*Reader(nil), tr.Readers()...) {
			changed, done, err := r.Read(int64(i), tr.Buffer(), close, func(rec *Record) { out = append(out, string(rec.Body)) })
			require(t, err)
			progress = progress || changed || done
			if done {
				tr.Remove(r)
			}
		}
		if !progress {
			break
		}
	}
	return out
}

func TestStartAtEndOnlyAtFirstStart(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	writeFile(t, p, line(1)+line(2)+"2024-05-01T10:00:00Z stdout F incompl", false)
	tr := testTracker(t, root, nil, true, true)
	tr.Discover(0)
	writeFile(t, p, "ete\n"+line(3), true)
	if got := readAll(t, tr, false); fmt.Sprint(got) != "[incomplete line 3]" {
		t.Fatalf("got %q", got)
	}
	// Not a first start: a file found now is read from its beginning.
	q := filepath.Join(root, "ns_q_u", "c", "0.log")
	writeFile(t, q, line(1), false)
	tr2 := testTracker(t, root, nil, false, true)
	tr2.Discover(0)
	if got := readAll(t, tr2, false); len(got) != 5 {
		t.Fatalf("got %q", got)
	}
}

func TestRestoreAndInodeReuse(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	writeFile(t, p, line(1)+line(2), false)
	tr := testTracker(t, root, nil, true, false)
	tr.Discover(0)
	readAll(t, tr, false)
	st := tr.Readers()[0].State()
	enc := MarshalState(st)
	dec, err := UnmarshalState(enc)
	require(t, err)
	if !bytes.Equal(MarshalState(dec), enc) {
		t.Fatal("state round trip changed")
	}
	for _, r := range tr.Readers() {
		_ = r.Close()
	}

	writeFile(t, p, line(3), true)
	tr2 := testTracker(t, root, []State{dec}, false, false)
	tr2.Discover(0)
	if got := readAll(t, tr2, false); fmt.Sprint(got) != "[line 3]" {
		t.Fatalf("resume: got %q", got)
	}
	// Same inode, other content (what inode reuse looks like): the saved offset must not apply.
	other := dec
	other.FP.Hash ^= 1
	tr3 := testTracker(t, root, []State{other}, false, false)
	tr3.Discover(0)
	if got := readAll(t, tr3, false); len(got) != 3 {
		t.Fatalf("inode reuse: got %q", got)
	}
}

func TestRotatedNamesAndSymlinksAreNotNewFiles(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	writeFile(t, p, line(1), false)
	writeFile(t, p+".20240501-100000", line(9), false)
	writeFile(t, p+".20240501-090000.gz", "binary", false)
	require(t, os.Symlink(p, filepath.Join(root, "ns_p_u", "c", "link.log")))
	tr := testTracker(t, root, nil, true, false)
	tr.Discover(0)
	if tr.Len() != 1 {
		t.Fatalf("%d readers, want 1", tr.Len())
	}
	// Rename rotation: the old file is drained, the new one is a new reader.
	require(t, os.Rename(p, p+".20240501-110000"))
	writeFile(t, p, line(2), false)
	tr.Discover(1)
	if tr.Len() != 2 || !tr.Readers()[0].Draining || tr.Readers()[1].Draining {
		t.Fatalf("after rotation: %d readers", tr.Len())
	}
	// The new file is read once the rotated one is done (closed), never before it.
	if got := readAll(t, tr, false); fmt.Sprint(got) != "[line 1]" {
		t.Fatalf("got %q", got)
	}
	if got := readAll(t, tr, true); fmt.Sprint(got) != "[line 2]" {
		t.Fatalf("got %q", got)
	}
}

func TestLongLineIsCutAndSkipped(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	long := "2024-05-01T10:00:00Z stdout F " + string(bytes.Repeat([]byte("x"), 200<<10)) + "\n"
	writeFile(t, p, long+line(1), false)
	tr := testTracker(t, root, nil, true, false)
	tr.Discover(0)
	var recs []Record
	for i := 0; i < 200; i++ {
		for _, r := range tr.Readers() {
			_, _, err := r.Read(0, tr.Buffer(), false, func(rec *Record) {
				c := *rec
				c.Body = append([]byte(nil), rec.Body...)
				recs = append(recs, c)
			})
			require(t, err)
		}
	}
	if len(recs) != 2 || len(recs[0].Body) != 1024 || recs[0].Flags&(1) == 0 || string(recs[1].Body) != "line 1" {
		t.Fatalf("got %d records", len(recs))
	}
}

// TestExpand: one walk gives what filepath.Glob would match and the directories to watch: the
// static prefix (or its nearest existing ancestor) and every directory matched on the way.
func TestExpand(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{
		"pods/ns_a_1/app/0.log", "pods/ns_a_1/app/0.log.20240501-100000", "pods/ns_a_1/app/notes.txt",
		"pods/ns_b_2/web/1.log", "pods/ns_b_2/web/0.log", "pods/ns_c_3/empty/", "pods/stray.log",
		"containers/real.log",
	} {
		p := filepath.Join(root, f)
		if strings.HasSuffix(f, "/") {
			require(t, os.MkdirAll(p, 0o755))
			continue
		}
		require(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require(t, os.WriteFile(p, nil, 0o644))
	}
	require(t, os.Symlink(filepath.Join(root, "containers/real.log"), filepath.Join(root, "containers/link.log")))
	require(t, os.Symlink(filepath.Join(root, "pods/ns_b_2"), filepath.Join(root, "pods/ns_link_4")))
	for _, tc := range []struct {
		pattern     string
		files, dirs []string
	}{
		{
			pattern: "pods/*/*/*.log",
			files:   []string{"pods/ns_a_1/app/0.log", "pods/ns_b_2/web/0.log", "pods/ns_b_2/web/1.log", "pods/ns_link_4/web/0.log", "pods/ns_link_4/web/1.log"},
			dirs:    []string{"pods", "pods/ns_a_1", "pods/ns_a_1/app", "pods/ns_b_2", "pods/ns_b_2/web", "pods/ns_c_3", "pods/ns_c_3/empty", "pods/ns_link_4", "pods/ns_link_4/web"},
		},
		{
			pattern: "pods/ns_b_2/web/0.log",
			files:   []string{"pods/ns_b_2/web/0.log"},
			dirs:    []string{"pods/ns_b_2/web"},
		},
		{
			pattern: "pods/ns_*/app/*",
			files:   []string{"pods/ns_a_1/app/0.log", "pods/ns_a_1/app/0.log.20240501-100000", "pods/ns_a_1/app/notes.txt"},
			dirs:    []string{"pods", "pods/ns_a_1", "pods/ns_a_1/app", "pods/ns_b_2", "pods/ns_c_3", "pods/ns_link_4"},
		},
		{
			pattern: "containers/*.log",
			files:   []string{"containers/link.log", "containers/real.log"},
			dirs:    []string{"containers"},
		},
		{
			// Not there yet: the nearest existing ancestor is watched.
			pattern: "var/log/pods/*/*/*.log",
			dirs:    []string{"."},
		},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			dirs := map[string]bool{}
			got := expand(filepath.Join(root, tc.pattern), dirs)
			rel := func(ps []string) []string {
				out := []string{}
				for _, p := range ps {
					r, err := filepath.Rel(root, p)
					require(t, err)
					out = append(out, r)
				}
				slices.Sort(out)
				return out
			}
			if g, w := rel(got), append([]string{}, tc.files...); !slices.Equal(g, w) {
				t.Fatalf("files %v, want %v", g, w)
			}
			if g := rel(slices.Collect(maps.Keys(dirs))); !slices.Equal(g, tc.dirs) {
				t.Fatalf("dirs %v, want %v", g, tc.dirs)
			}
			glob, err := filepath.Glob(filepath.Join(root, tc.pattern))
			require(t, err)
			slices.Sort(glob)
			if !slices.Equal(got, glob) {
				t.Fatalf("walk %v, filepath.Glob %v", got, glob)
			}
		})
	}
}

func FuzzUnmarshalState(f *testing.F) {
	f.Add(MarshalState(State{ID: FileID{1, 2}, Path: "/a/b.log", FP: Fingerprint{10, 99}, Offset: 1234, Format: FormatCRI, Joiner: []byte{1, 0, 0, 0, 0}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := UnmarshalState(b)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to the same state.
		s2, err := UnmarshalState(MarshalState(s))
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("round trip of %x: %+v vs %+v (%v)", b, s, s2, err)
		}
	})
}

// FuzzRead writes arbitrary bytes as a log file and reads it to the end: the reader must not
// fail or panic, must consume the whole file, and must only emit valid UTF-8 within the limits.
func FuzzRead(f *testing.F) {
	f.Add([]byte(line(1) + "2024-05-01T10:00:00Z stderr P a\xc3\n2024-05-01T10:00:00Z stderr F \xa9\ngarbage\n"))
	f.Add([]byte(`{"log":"x","stream":"stdout","time":"2024-05-01T10:00:00Z"}` + "\n" + line(2) + "no newline at end"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		p := filepath.Join(root, "ns_p_u", "c", "0.log")
		writeFile(t, p, string(data), false)
		tr := New(Config{
			Include: []string{filepath.Join(root, "*", "*", "*.log")},
			Read:    ReadConfig{FingerprintSize: 16, MaxLogSize: 64, MaxBytesPerRead: 128, FlushTimeout: 1, MultilineFlushTimeout: 1},
		}, nil, true)
		tr.Discover(0)
		if tr.Len() != 1 {
			t.Fatal("file not found")
		}
		r := tr.Readers()[0]
		for i := 0; ; i++ {
			if i > len(data)+10 {
				t.Fatal("reader does not finish")
			}
			_, done, err := r.Read(int64(i), tr.Buffer(), i > 0, func(rec *Record) {
				if !utf8.Valid(rec.Body) {
					t.Fatalf("invalid UTF-8 body %q", rec.Body)
				}
				if len(rec.Body) > 64*3 { // a replaced byte grows to three
					t.Fatalf("body of %d bytes", len(rec.Body))
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if done {
				break
			}
		}
		if r.Offset() != int64(len(data)) {
			t.Fatalf("offset %d of %d", r.Offset(), len(data))
		}
		_ = r.Close()
	})
}

// A checkpointed file that was rotated and compressed while the collector was down is resumed
// from the compressed file; when that file is corrupt, the failure is reported, never
// resumed from a silently partial copy.
func TestResumeFromCorruptCompressedFileIsReported(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	st := checkpointAfter(t, root, p, line(1)+line(2))

	var more bytes.Buffer
	for i := 3; i < 2000; i++ {
		more.WriteString(line(i))
	}
	writeFile(t, p, more.String(), true)
	raw, err := os.ReadFile(p)
	require(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(raw)
	require(t, err)
	require(t, zw.Close())
	require(t, os.Remove(p))
	// Cut the compressed stream in the middle: its start still matches the fingerprint.
	cut := gz.Bytes()[:gz.Len()/2]
	require(t, os.WriteFile(p+".20240501-100000.gz", cut, 0o644))

	tr2 := testTracker(t, root, []State{st}, false, false)
	_, errs := tr2.Discover(0)
	if len(errs) == 0 {
		t.Fatalf("a corrupt compressed file was resumed without an error; readers: %d", tr2.Len())
	}
	if tr2.Len() != 0 {
		t.Fatalf("a partial copy of a corrupt compressed file is being read (%d readers)", tr2.Len())
	}

	// The whole compressed file resumes where the checkpoint left off.
	require(t, os.WriteFile(p+".20240501-100000.gz", gz.Bytes(), 0o644))
	tr3 := testTracker(t, root, []State{st}, false, false)
	if _, errs := tr3.Discover(0); len(errs) != 0 {
		t.Fatal(errs)
	}
	if got := readAll(t, tr3, true); len(got) != 1997 || got[0] != "line 3" {
		t.Fatalf("resumed %d lines, first %q; want 1997 from line 3", len(got), got[:min(1, len(got))])
	}
}

// The readers share one buffer of a turn's read; the buffer for a longer line is made only when
// a line needs it, and such a line is still read whole.
func TestLargeBufferOnlyForLongLines(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "ns_pod_uid", "c", "0.log")
	var content strings.Builder
	for i := range 500 { // about 25 KiB, several turns of 4 KiB
		content.WriteString(line(i))
	}
	writeFile(t, path, content.String(), false)
	tr := testTracker(t, root, nil, true, false)
	tr.Discover(0)
	if got := len(readAll(t, tr, false)); got != 500 {
		t.Fatalf("read %d lines, want 500", got)
	}
	if tr.large != nil {
		t.Fatalf("a %d-byte buffer was made for lines of under 50 bytes", len(tr.large))
	}
	if want := 4096 + 64 + 1; len(tr.Buffer()) != want {
		t.Fatalf("the shared buffer is %d bytes, want %d", len(tr.Buffer()), want)
	}
	long := strings.Repeat("x", 6000) // longer than a turn's read (4096), shorter than MaxLogSize+64 KiB
	writeFile(t, path, "2024-05-01T10:00:01.000000000Z stdout F "+long+"\n", true)
	got := readAll(t, tr, false)
	if len(got) != 1 || got[0] != long[:1024] {
		t.Fatalf("the long line read as %d records", len(got))
	}
	if want := 1024 + 64<<10 + 1; len(tr.large) != want {
		t.Fatalf("the buffer for long lines is %d bytes, want %d", len(tr.large), want)
	}
}
