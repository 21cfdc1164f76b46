// SPDX-License-Identifier: Apache-2.0

package seglog

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// countMetrics counts what the log reports.
type countMetrics struct {
	written, read, segments, live, compactions, dropped, corrupt atomic.Int64
}

func (m *countMetrics) BytesWritten(n int64)    { m.written.Add(n) }
func (m *countMetrics) BytesRead(n int64)       { m.read.Add(n) }
func (m *countMetrics) Segments(d int64)        { m.segments.Add(d) }
func (m *countMetrics) LiveBytes(d int64)       { m.live.Add(d) }
func (m *countMetrics) Compaction()             { m.compactions.Add(1) }
func (m *countMetrics) RecoveryDropped(n int64) { m.dropped.Add(n) }
func (m *countMetrics) ReadCorrupt()            { m.corrupt.Add(1) }

func open(t testing.TB, dir string, segmentSize int64) (*Store, *countMetrics) {
	t.Helper()
	m := &countMetrics{}
	s, err := Open(dir, Options{SegmentSize: segmentSize, Metrics: m})
	require.NoError(t, err)
	return s, m
}

func set(k, v string) *storage.Operation { return storage.SetOperation(k, []byte(v)) }
func del(k string) *storage.Operation    { return storage.DeleteOperation(k) }
func get(k string) *storage.Operation    { return storage.GetOperation(k) }

// contents reads every key of want and of the model from s.
func requireContents(t *testing.T, s *Store, want map[string]string, absent ...string) {
	t.Helper()
	for k, v := range want {
		got, err := s.Get(k)
		require.NoError(t, err, k)
		require.Equal(t, v, string(got), k)
	}
	for _, k := range absent {
		got, err := s.Get(k)
		require.NoError(t, err, k)
		require.Nil(t, got, k)
	}
	require.Equal(t, len(want), s.Stats().Keys)
}

// checkAccounting compares the live bytes and segments with the index and the files.
func checkAccounting(t *testing.T, s *Store, m *countMetrics) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	perSeg := map[*segment]int64{}
	var live int64
	for _, l := range s.index {
		perSeg[l.seg] += int64(l.n)
		live += int64(l.n)
		require.Contains(t, s.segs, l.seg)
	}
	for _, seg := range s.segs {
		require.Equal(t, perSeg[seg], seg.live, seg.path)
		info, err := os.Stat(seg.path)
		require.NoError(t, err)
		require.Equal(t, info.Size(), seg.size, seg.path)
	}
	if m != nil {
		require.Equal(t, live, m.live.Load())
		require.Equal(t, int64(len(s.segs)), m.segments.Load())
	}
}

func TestBatches(t *testing.T) {
	tests := []struct {
		name   string
		steps  [][]*storage.Operation
		want   map[string]string
		absent []string
		// gets: the values the batch's gets saw, in order, for the last step
		gets []string
	}{
		{
			name:  "set and get",
			steps: [][]*storage.Operation{{set("a", "1"), set("b", "2")}},
			want:  map[string]string{"a": "1", "b": "2"},
		},
		{
			name:  "overwrite",
			steps: [][]*storage.Operation{{set("a", "1")}, {set("a", "22")}},
			want:  map[string]string{"a": "22"},
		},
		{
			name:   "delete",
			steps:  [][]*storage.Operation{{set("a", "1"), set("b", "2")}, {del("a")}},
			want:   map[string]string{"b": "2"},
			absent: []string{"a"},
		},
		{
			name:   "delete of a missing key",
			steps:  [][]*storage.Operation{{del("x")}, {set("a", "1"), del("y")}},
			want:   map[string]string{"a": "1"},
			absent: []string{"x", "y"},
		},
		{
			name:  "empty value is set, not absent",
			steps: [][]*storage.Operation{{set("a", "")}},
			want:  map[string]string{"a": ""},
		},
		{
			name:   "set then delete in one batch",
			steps:  [][]*storage.Operation{{set("a", "1"), del("a")}},
			want:   map[string]string{},
			absent: []string{"a"},
		},
		{
			name:  "delete then set in one batch",
			steps: [][]*storage.Operation{{set("a", "1")}, {del("a"), set("a", "2")}},
			want:  map[string]string{"a": "2"},
		},
		{
			name:  "gets see the batch's writes",
			steps: [][]*storage.Operation{{set("a", "1"), set("b", "2")}, {get("a"), set("a", "3"), get("a"), del("b"), get("b"), get("c")}},
			want:  map[string]string{"a": "3"},
			gets:  []string{"1", "3", "<nil>", "<nil>"},
		},
		{
			name:  "the queue's three batches",
			steps: [][]*storage.Operation{{set("qmv0", "w1"), set("0", "item0")}, {set("qmv0", "r1"), get("0")}, {set("qmv0", "d1"), del("0")}},
			want:  map[string]string{"qmv0": "d1"},
		},
		{
			name:  "binary and long keys",
			steps: [][]*storage.Operation{{set("\x00\xff/../k", "v"), set(string(bytes.Repeat([]byte("k"), 70000)), "long")}},
			want:  map[string]string{"\x00\xff/../k": "v", string(bytes.Repeat([]byte("k"), 70000)): "long"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, m := open(t, dir, 4096)
			var gets []string
			for _, ops := range tt.steps {
				require.NoError(t, s.Batch(ops...))
				gets = gets[:0]
				for _, op := range ops {
					if op.Type == storage.Get {
						if op.Value == nil {
							gets = append(gets, "<nil>")
						} else {
							gets = append(gets, string(op.Value))
						}
					}
				}
			}
			if tt.gets != nil {
				require.Equal(t, tt.gets, gets)
			}
			requireContents(t, s, tt.want, tt.absent...)
			checkAccounting(t, s, m)
			require.NoError(t, s.Close())
			// The same after recovery.
			s, m = open(t, dir, 4096)
			requireContents(t, s, tt.want, tt.absent...)
			checkAccounting(t, s, m)
			require.Zero(t, m.dropped.Load())
			require.NoError(t, s.Close())
		})
	}
}

func TestWritesOnce(t *testing.T) {
	// Each value costs its record and a group header once; deletes of missing keys and
	// get-only batches write nothing (rule 5).
	s, m := open(t, t.TempDir(), 1<<20)
	defer func() { require.NoError(t, s.Close()) }()
	value := bytes.Repeat([]byte("v"), 1000)
	require.NoError(t, s.Batch(storage.SetOperation("k", value)))
	require.Equal(t, int64(groupHeaderSize+recordSize(1, 1000)), m.written.Load())
	require.NoError(t, s.Batch(get("k"), del("missing")))
	require.Equal(t, int64(groupHeaderSize+recordSize(1, 1000)), m.written.Load())
	require.Equal(t, int64(recordSize(1, 1000)), m.read.Load())
}

func TestClosed(t *testing.T) {
	s, _ := open(t, t.TempDir(), 4096)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Batch(set("a", "1")), ErrClosed)
	_, err := s.Get("a")
	require.ErrorIs(t, err, ErrClosed)
}

func TestOneClientPerDirectory(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir, 4096)
	_, err := Open(dir, Options{SegmentSize: 4096})
	require.ErrorContains(t, err, "in use by another client")
	require.NoError(t, s.Close())
	s, _ = open(t, dir, 4096)
	require.NoError(t, s.Close())
}

func TestFIFORemovesWholeSegments(t *testing.T) {
	// The persistent queue's pattern: every segment is removed whole, nothing is compacted or
	// copied, and the bytes written are the values plus their few bytes of framing.
	s, m := open(t, t.TempDir(), 64<<10)
	defer func() { require.NoError(t, s.Close()) }()
	item := bytes.Repeat([]byte("x"), 10<<10)
	const lag = 10
	var queued int64
	read := 0
	for w := range 500 {
		require.NoError(t, s.Batch(set("qmv0", "metadata of forty bytes or so, indexes.."), storage.SetOperation(strconv.Itoa(w), item)))
		queued += int64(len(item))
		for ; w-read >= lag; read++ {
			op := get(strconv.Itoa(read))
			require.NoError(t, s.Batch(set("qmv0", "metadata of forty bytes or so, indexes.."), op))
			require.Equal(t, item, op.Value)
			require.NoError(t, s.Batch(set("qmv0", "metadata of forty bytes or so, indexes.."), del(strconv.Itoa(read))))
		}
		require.LessOrEqual(t, s.Stats().Segments, 3, "at most the queue's 100 KiB and the active segment")
	}
	require.Zero(t, m.compactions.Load())
	ratio := float64(m.written.Load()) / float64(queued)
	require.Less(t, ratio, 1.05, "bytes written per byte queued")
	checkAccounting(t, s, m)
}

func TestCompactionBoundsSpace(t *testing.T) {
	// A key kept while everything around it goes: its segment is compacted once it holds less
	// than half live, and the files stay within twice the live bytes plus the active segment.
	const segSize = 32 << 10
	dir := t.TempDir()
	s, m := open(t, dir, segSize)
	item := bytes.Repeat([]byte("y"), 3000)
	require.NoError(t, s.Batch(storage.SetOperation("pinned", item)))
	for i := range 200 {
		require.NoError(t, s.Batch(storage.SetOperation(strconv.Itoa(i), item)))
		if i >= 2 {
			require.NoError(t, s.Batch(del(strconv.Itoa(i-2))))
		}
		st := s.Stats()
		require.LessOrEqual(t, st.FileBytes, 2*st.LiveBytes+2*segSize+int64(groupHeaderSize+recordSize(3, 3000)), "after %d", i)
	}
	require.Positive(t, m.compactions.Load())
	requireContents(t, s, map[string]string{"pinned": string(item), "198": string(item), "199": string(item)}, "0", "1", "197")
	checkAccounting(t, s, m)
	require.NoError(t, s.Close())
	s, m = open(t, dir, segSize)
	requireContents(t, s, map[string]string{"pinned": string(item), "198": string(item), "199": string(item)}, "0", "1", "197")
	checkAccounting(t, s, m)
	require.NoError(t, s.Close())
}

func TestTombstonesOfOlderSegmentsSurvive(t *testing.T) {
	// A key set in an old segment that stays (another key keeps it over half live) and deleted
	// in a segment that is removed: the tombstone moves forward, the key stays deleted after
	// recovery (rule 7).
	const segSize = 8 << 10
	dir := t.TempDir()
	s, _ := open(t, dir, segSize)
	big := bytes.Repeat([]byte("b"), 6000)
	small := bytes.Repeat([]byte("s"), 500)
	require.NoError(t, s.Batch(storage.SetOperation("keeper", big), storage.SetOperation("gone", small)))
	filler := bytes.Repeat([]byte("f"), 3000)
	// The next segments: the tombstone of "gone", then fillers that are deleted again.
	require.NoError(t, s.Batch(storage.SetOperation("f0", filler)))
	require.NoError(t, s.Batch(del("gone")))
	for i := 1; i < 12; i++ {
		require.NoError(t, s.Batch(storage.SetOperation("f"+strconv.Itoa(i), filler)))
		require.NoError(t, s.Batch(del("f"+strconv.Itoa(i-1))))
	}
	st := s.Stats()
	require.Less(t, st.Segments, 6, "emptied segments are removed")
	require.NoError(t, s.Close())
	s, m := open(t, dir, segSize)
	requireContents(t, s, map[string]string{"keeper": string(big), "f11": string(filler)}, "gone", "f0", "f10")
	checkAccounting(t, s, m)
	require.NoError(t, s.Close())
}

// TestRandomAgainstModel runs random operations against a map, reopening at random points,
// with every space bound and accounting checked on the way.
func TestRandomAgainstModel(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 7))
			const segSize = 16 << 10
			dir := t.TempDir()
			s, m := open(t, dir, segSize)
			model := map[string]string{}
			maxGroup, compactions := int64(0), int64(0)
			for step := range 3000 {
				var ops []*storage.Operation
				groupSize := int64(groupHeaderSize)
				for range 1 + rng.IntN(4) {
					k := strconv.Itoa(rng.IntN(40))
					switch r := rng.IntN(10); {
					case r < 5:
						v := fmt.Sprintf("%d-%s", step, bytes.Repeat([]byte{'a' + byte(rng.IntN(26))}, rng.IntN(3000)))
						ops = append(ops, set(k, v))
						groupSize += int64(recordSize(len(k), len(v)))
					case r < 8:
						ops = append(ops, del(k))
						groupSize += int64(recordSize(len(k), 0))
					default:
						ops = append(ops, get(k))
					}
				}
				maxGroup = max(maxGroup, groupSize)
				require.NoError(t, s.Batch(ops...))
				for _, op := range ops {
					switch op.Type {
					case storage.Set:
						model[op.Key] = string(op.Value)
					case storage.Delete:
						delete(model, op.Key)
					}
				}
				st := s.Stats()
				// Rule 8's bound; the tombstones kept are a few per key here.
				require.LessOrEqual(t, st.FileBytes, 2*st.LiveBytes+2*segSize+maxGroup+40*int64(recordSize(2, 0)), "step %d", step)
				if rng.IntN(300) == 0 {
					compactions += m.compactions.Load()
					require.NoError(t, s.Close())
					s, m = open(t, dir, segSize)
					require.Zero(t, m.dropped.Load())
				}
			}
			compactions += m.compactions.Load()
			require.Positive(t, compactions, "the random operations compact")
			requireContents(t, s, model)
			checkAccounting(t, s, m)
			require.NoError(t, s.Close())
			s, m = open(t, dir, segSize)
			requireContents(t, s, model)
			checkAccounting(t, s, m)
			require.NoError(t, s.Close())
		})
	}
}

// segmentFilesOf lists dir's segment files by id.
func segmentFilesOf(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"+segmentSuffix))
	require.NoError(t, err)
	slices.Sort(files)
	return files
}

func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	for _, f := range segmentFilesOf(t, from) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, filepath.Base(f)), data, 0o600))
	}
	return to
}

func TestTornLastGroup(t *testing.T) {
	// The last group cut at every byte: nothing before it is lost, nothing of it is applied,
	// the cut part is counted; whole, it is applied (rules 3, 10).
	dir := t.TempDir()
	s, _ := open(t, dir, 1<<20)
	require.NoError(t, s.Batch(set("qmv0", "m1"), set("0", "zero"), set("1", "one")))
	require.NoError(t, s.Batch(set("qmv0", "m2"), del("0")))
	before := map[string]string{"qmv0": "m2", "1": "one"}
	files := segmentFilesOf(t, dir)
	require.Len(t, files, 1)
	info, err := os.Stat(files[0])
	require.NoError(t, err)
	start := info.Size()
	require.NoError(t, s.Batch(set("qmv0", "m3"), set("2", "two"), del("1"), set("3", "three")))
	after := map[string]string{"qmv0": "m3", "2": "two", "3": "three"}
	require.NoError(t, s.Close())
	info, err = os.Stat(files[0])
	require.NoError(t, err)
	end := info.Size()

	for cut := start; cut <= end; cut++ {
		torn := copyDir(t, dir)
		segFile := filepath.Join(torn, filepath.Base(files[0]))
		require.NoError(t, os.Truncate(segFile, cut))
		s, m := open(t, torn, 1<<20)
		if cut == end {
			requireContents(t, s, after, "0", "1")
			require.Zero(t, m.dropped.Load())
		} else {
			requireContents(t, s, before, "0", "2", "3")
			require.Equal(t, cut-start, m.dropped.Load(), "cut at %d", cut)
		}
		checkAccounting(t, s, m)
		// Writing on after recovery works, and a second recovery sees it.
		require.NoError(t, s.Batch(set("after", "yes")))
		require.NoError(t, s.Close())
		s, m = open(t, torn, 1<<20)
		got, err := s.Get("after")
		require.NoError(t, err)
		require.Equal(t, "yes", string(got))
		require.Zero(t, m.dropped.Load(), "the torn part was truncated at the first recovery")
		require.NoError(t, s.Close())
	}
}

func TestCorruptOlderSegment(t *testing.T) {
	// A flipped byte in an older segment drops that segment from there on, counted; the other
	// segments and the client work (rule 10). A value whose bytes rot after recovery is an
	// error to its get, counted (rule 4).
	dir := t.TempDir()
	s, _ := open(t, dir, 4096)
	v := bytes.Repeat([]byte("v"), 1500)
	for i := range 8 {
		require.NoError(t, s.Batch(storage.SetOperation(strconv.Itoa(i), v)))
	}
	require.NoError(t, s.Close())
	files := segmentFilesOf(t, dir)
	require.GreaterOrEqual(t, len(files), 3)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	// The second group of the first segment: key "1".
	secondGroup := groupHeaderSize + recordSize(1, 1500)
	data[secondGroup+groupHeaderSize+recHeaderSize+1+10] ^= 0x40
	require.NoError(t, os.WriteFile(files[0], data, 0o600))

	s, m := open(t, dir, 4096)
	require.Equal(t, int64(len(data)-secondGroup), m.dropped.Load())
	got, err := s.Get("0")
	require.NoError(t, err)
	require.Equal(t, v, got)
	absent, err := s.Get("1")
	require.NoError(t, err)
	require.Nil(t, absent)
	for i := 3; i < 8; i++ {
		got, err := s.Get(strconv.Itoa(i))
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
	checkAccounting(t, s, m)

	// Rot under a live value: the get fails with an error and is counted, no panic.
	s.mu.Lock()
	l := s.index["7"]
	s.mu.Unlock()
	_, err = l.seg.f.WriteAt([]byte{'!'}, l.off+int64(l.n)-1)
	require.NoError(t, err)
	_, err = s.Get("7")
	require.ErrorIs(t, err, errCorrupt)
	require.Equal(t, int64(1), m.corrupt.Load())
	require.NoError(t, s.Close())
}

func TestUnrelatedFilesAndEmptySegments(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0000000000000005.seg"), nil, 0o600))
	s, m := open(t, dir, 4096)
	require.NoError(t, s.Batch(set("a", "1")))
	require.Equal(t, 1, s.Stats().Segments, "the empty segment is removed")
	require.NoError(t, s.Close())
	require.Zero(t, m.dropped.Load())
	_, err := os.Stat(filepath.Join(dir, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "0000000000000006.seg")}, segmentFilesOf(t, dir), "numbers are not reused")
}

func TestGetResultIsTheCallers(t *testing.T) {
	// A value set in a batch and read in the same batch is a copy: changing the caller's
	// slice afterwards changes nothing stored.
	s, _ := open(t, t.TempDir(), 4096)
	defer func() { require.NoError(t, s.Close()) }()
	v := []byte("abc")
	op := get("k")
	require.NoError(t, s.Batch(storage.SetOperation("k", v), op))
	v[0] = 'X'
	op.Value[1] = 'Y'
	got, err := s.Get("k")
	require.NoError(t, err)
	assert.Equal(t, "abc", string(got))
	assert.Equal(t, []string{"k"}, slices.Collect(maps.Keys(s.index)))
}

// FuzzSegmentReader opens a log whose only segment holds the fuzzer's bytes: recovery never
// panics, keeps exactly a prefix of whole groups, counts the rest, and what it keeps reads
// back (rules 3, 4, 10). An execution makes files (about 1,000 a second), so the fuzzer's
// minimization of a new input takes long with its default time: -fuzzminimizetime 2s.
func FuzzSegmentReader(f *testing.F) {
	// Seeds: real segments, whole and cut.
	seedDir := f.TempDir()
	s, _ := open(f, seedDir, 1<<20)
	require.NoError(f, s.Batch(set("qmv0", "m1"), set("0", "zero")))
	require.NoError(f, s.Batch(set("qmv0", "m2"), del("0"), set("1", string(bytes.Repeat([]byte("1"), 300)))))
	require.NoError(f, s.Batch(set("", ""), del("1")))
	require.NoError(f, s.Close())
	files, err := filepath.Glob(filepath.Join(seedDir, "*"+segmentSuffix))
	require.NoError(f, err)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(f, err)
		if len(data) > 0 {
			f.Add(data)
			f.Add(data[:len(data)/2])
			f.Add(data[:len(data)-1])
		}
	}
	f.Add([]byte{})
	f.Add([]byte("QSG1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "0000000000000001"+segmentSuffix)
		require.NoError(t, os.WriteFile(path, data, 0o600))
		m := &countMetrics{}
		s, err := Open(dir, Options{SegmentSize: 4096, Metrics: m})
		require.NoError(t, err)
		defer func() { require.NoError(t, s.Close()) }()
		// The kept part is a prefix of valid groups: replaying it alone drops nothing.
		dropped := m.dropped.Load()
		require.GreaterOrEqual(t, dropped, int64(0))
		require.LessOrEqual(t, dropped, int64(len(data)))
		kept := data[:int64(len(data))-dropped]
		replayed := &Store{index: map[string]loc{}, opts: Options{Metrics: nopMetrics{}}}
		seg := &segment{setKeys: map[string]struct{}{}, tombKeys: map[string]struct{}{}}
		valid, readErr, formatErr := replayed.replay(seg, bytes.NewReader(kept), int64(len(kept)))
		require.NoError(t, readErr)
		require.NoError(t, formatErr)
		require.Equal(t, int64(len(kept)), valid)
		// Every live key reads back.
		for key := range replayed.index {
			_, err := s.Get(key)
			require.NoError(t, err)
		}
		require.Equal(t, len(replayed.index), s.Stats().Keys)
		checkAccounting(t, s, m)
	})
}

func TestFailedWriteChangesNothing(t *testing.T) {
	// A write that fails and cannot be truncated away (here: the segment's descriptor is
	// read-only) returns the error, changes nothing, and the next group goes to a new segment;
	// recovery sees the acknowledged writes only (rule 11).
	dir := t.TempDir()
	s, m := open(t, dir, 1<<20)
	require.NoError(t, s.Batch(set("a", "1")))
	s.mu.Lock()
	active := s.active()
	readOnly, err := os.Open(active.path)
	require.NoError(t, err)
	require.NoError(t, active.f.Close())
	active.f = readOnly
	s.mu.Unlock()

	require.Error(t, s.Batch(set("b", "2"), del("a")))
	requireContents(t, s, map[string]string{"a": "1"}, "b")
	require.NoError(t, s.Batch(set("c", "3")))
	require.Equal(t, 2, s.Stats().Segments, "the next group went to a new segment")
	requireContents(t, s, map[string]string{"a": "1", "c": "3"}, "b")
	checkAccounting(t, s, m)
	require.NoError(t, s.Close())

	s, m = open(t, dir, 1<<20)
	requireContents(t, s, map[string]string{"a": "1", "c": "3"}, "b")
	require.Zero(t, m.dropped.Load())
	require.NoError(t, s.Close())
}

func TestFsync(t *testing.T) {
	// The same results with every group and segment change flushed (rule 9).
	dir := t.TempDir()
	s, err := Open(dir, Options{SegmentSize: 4096, Fsync: true})
	require.NoError(t, err)
	v := bytes.Repeat([]byte("f"), 1500)
	for i := range 20 {
		require.NoError(t, s.Batch(set("qmv0", strconv.Itoa(i)), storage.SetOperation(strconv.Itoa(i), v)))
		if i >= 3 {
			require.NoError(t, s.Batch(del(strconv.Itoa(i-3))))
		}
	}
	require.LessOrEqual(t, s.Stats().Segments, 3)
	require.NoError(t, s.Close())
	s, m := open(t, dir, 4096)
	requireContents(t, s, map[string]string{"qmv0": "19", "17": string(v), "18": string(v), "19": string(v)}, "16", "0")
	checkAccounting(t, s, m)
	require.NoError(t, s.Close())
}

func TestConcurrentClients(t *testing.T) {
	// Calls from several goroutines are serialized: each writer's keys read back as written
	// (run with -race).
	dir := t.TempDir()
	s, m := open(t, dir, 8<<10)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range errs {
		wg.Go(func() {
			errs[w] = concurrentWriter(s, w)
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 4*5+1, s.Stats().Keys)
	checkAccounting(t, s, m)
	require.NoError(t, s.Close())
}

// concurrentWriter writes, reads back and deletes its own keys; the first failure is its error.
func concurrentWriter(s *Store, w int) error {
	for i := range 200 {
		k := fmt.Sprintf("%d-%d", w, i)
		v := []byte(k + string(bytes.Repeat([]byte("c"), i%700)))
		if err := s.Batch(set("qmv0", k), storage.SetOperation(k, v)); err != nil {
			return err
		}
		got, err := s.Get(k)
		if err != nil {
			return err
		}
		if !bytes.Equal(v, got) {
			return fmt.Errorf("%s: read back %d bytes, wrote %d", k, len(got), len(v))
		}
		if i >= 5 {
			if err := s.Batch(set("qmv0", k), del(fmt.Sprintf("%d-%d", w, i-5))); err != nil {
				return err
			}
		}
	}
	return nil
}

func TestCompactionDropsAnUnreadableValue(t *testing.T) {
	// A live value whose bytes rotted is dropped when its segment is compacted, counted, and
	// the key's older value, in an older segment, does not come back after recovery.
	const segSize = 8 << 10
	dir := t.TempDir()
	s, m := open(t, dir, segSize)
	v := bytes.Repeat([]byte("o"), 3000)
	big := bytes.Repeat([]byte("b"), 6000)
	require.NoError(t, s.Batch(storage.SetOperation("k", []byte("old")), storage.SetOperation("keep", big))) // segment 1
	require.NoError(t, s.Batch(storage.SetOperation("k", v)))                                                // segment 2
	require.NoError(t, s.Batch(storage.SetOperation("x", v)))                                                // segment 2
	require.NoError(t, s.Batch(storage.SetOperation("y", v)))                                                // segment 3
	s.mu.Lock()
	l := s.index["k"]
	require.NotEqual(t, s.index["keep"].seg, l.seg)
	_, err := l.seg.f.WriteAt([]byte{'!'}, l.off+int64(l.n)-1)
	require.NoError(t, err)
	require.NoError(t, s.compact(l.seg))
	s.mu.Unlock()
	require.Equal(t, int64(1), m.corrupt.Load())
	want := map[string]string{"keep": string(big), "x": string(v), "y": string(v)}
	requireContents(t, s, want, "k")
	checkAccounting(t, s, m)
	require.NoError(t, s.Close())
	s, m = open(t, dir, segSize)
	requireContents(t, s, want, "k")
	checkAccounting(t, s, m)
	require.NoError(t, s.Close())
}

func TestTornGroupOpeningASegment(t *testing.T) {
	// The last group was the first of a new segment file and is cut, as a process killed
	// while writing it leaves it: the file ends up empty and is removed, everything before it
	// is there (rules 6, 10).
	const segSize = 4096
	dir := t.TempDir()
	s, _ := open(t, dir, segSize)
	v := bytes.Repeat([]byte("t"), 3000)
	require.NoError(t, s.Batch(storage.SetOperation("a", v)))
	require.NoError(t, s.Batch(storage.SetOperation("b", v), set("qmv0", "2")))
	require.NoError(t, s.Close())
	files := segmentFilesOf(t, dir)
	last := files[len(files)-1]
	data, err := os.ReadFile(last)
	require.NoError(t, err)
	require.Len(t, data, groupHeaderSize+recordSize(1, 3000)+recordSize(4, 1), "b's group opened a segment")
	for _, cut := range []int{1, groupHeaderSize, len(data) / 2, len(data) - 1} {
		torn := copyDir(t, dir)
		require.NoError(t, os.Truncate(filepath.Join(torn, filepath.Base(last)), int64(cut)))
		s, m := open(t, torn, segSize)
		require.Equal(t, int64(cut), m.dropped.Load())
		requireContents(t, s, map[string]string{"a": string(v)}, "b", "qmv0")
		checkAccounting(t, s, m)
		require.NoError(t, s.Close())
		require.NotContains(t, segmentFilesOf(t, torn), filepath.Join(torn, filepath.Base(last)), "the emptied segment is removed")
	}
}
