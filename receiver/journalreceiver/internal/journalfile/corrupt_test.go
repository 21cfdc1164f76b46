// SPDX-License-Identifier: Apache-2.0

package journalfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver/internal/journaltest"
)

var (
	sampleOnce sync.Once
	sample     []byte
	sampleN    int
)

// sampleFile is a small compact, zstd-compressed journal file from systemd's writer, cut after
// its last object (the writer pre-allocates 8 MiB of zeros).
func sampleFile(t testing.TB) ([]byte, int) {
	t.Helper()
	journaltest.RemoteBin(t)
	sampleOnce.Do(func() {
		path := filepath.Join(t.TempDir(), "s.journal") // only the bytes are kept
		entries := journaltest.Generate(7, 40, 6, 1_700_000_000_000_000)
		journaltest.Write(t, path, entries, nil)
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		tail := le.Uint64(b[136:])
		end := tail + le.Uint64(b[tail+8:])
		sample, sampleN = b[:(end+7)&^7], len(entries)
	})
	require.NotNil(t, sample)
	return sample, sampleN
}

// drain reads until EOF or a chain error, counting entries and skipped ones; it fails the test
// when the walk does not end within a bound the file's size gives.
func drain(t testing.TB, src Source) (entries []*Entry, skipped int, err error) {
	r, err := NewReader(src)
	if err != nil {
		return nil, 0, err
	}
	size, _ := src.Size()
	for calls := int64(0); ; calls++ {
		if calls > size/objHeaderSize+2 {
			t.Fatalf("walk did not end after %d calls on %d bytes", calls, size)
		}
		e, err := r.Next()
		switch {
		case err == nil:
			entries = append(entries, e)
		case errors.Is(err, io.EOF):
			return entries, skipped, nil
		case r.sticky != nil:
			return entries, skipped, err
		default:
			require.ErrorIs(t, err, ErrCorrupt)
			skipped++
		}
	}
}

func TestTruncated(t *testing.T) {
	t.Parallel()
	b, n := sampleFile(t)
	all, skipped, err := drain(t, BytesSource(b))
	require.NoError(t, err)
	require.Zero(t, skipped)
	require.Len(t, all, n)
	// Every cut: never a panic or a hang; what is read is a prefix of the whole, field for field
	// (an entry may lose items whose DATA objects were cut off, counted in BadFields).
	// Every 8 bytes through the header and the first objects, then about 500 cuts over the rest.
	step := max(8, (len(b)/500)&^7)
	for cut := 0; cut < len(b); {
		got, _, err := drain(t, BytesSource(b[:cut]))
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt, "cut %d", cut)
		}
		require.LessOrEqual(t, len(got), n)
		for i, e := range got {
			require.Equal(t, all[i].Seqnum, e.Seqnum, "cut %d", cut)
			require.Equal(t, len(all[i].Fields), len(e.Fields)+e.BadFields, "cut %d", cut)
		}
		if cut < 4096 {
			cut += 8
		} else {
			cut += step
		}
	}
}

func TestArrayLoop(t *testing.T) {
	t.Parallel()
	b, n := sampleFile(t)
	b = append([]byte(nil), b...)
	// Point the second entry array back at the first: journalctl stops there; so must we.
	first := le.Uint64(b[176:])
	second := uint64(le.Uint32(b[first+16:])) // compact: 32-bit offsets
	require.NotZero(t, second)
	le.PutUint32(b[second+16:], uint32(first))
	got, _, err := drain(t, BytesSource(b))
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "loop")
	require.NotEmpty(t, got)
	require.Less(t, len(got), n)
	// A loop onto itself.
	le.PutUint32(b[second+16:], uint32(second))
	_, _, err = drain(t, BytesSource(b))
	require.ErrorContains(t, err, "loop")
}

func TestBadEntrySkipped(t *testing.T) {
	t.Parallel()
	b, n := sampleFile(t)
	b = append([]byte(nil), b...)
	// Break the type of the third entry object: a counted skip, the others read.
	first := le.Uint64(b[176:])
	third := uint64(le.Uint32(b[first+arrayFixedSize+8:]))
	b[third] = objTag
	got, skipped, err := drain(t, BytesSource(b))
	require.NoError(t, err)
	require.Equal(t, 1, skipped)
	require.Len(t, got, n-1)
	// Break one DATA object: the entries pointing at it keep their other fields.
	b[third] = objEntry
	d := uint64(le.Uint32(b[third+entryFixedSize:]))
	b[d] = objField
	got, skipped, err = drain(t, BytesSource(b))
	require.NoError(t, err)
	require.Zero(t, skipped)
	require.Len(t, got, n)
	require.Equal(t, 1, got[2].BadFields)
	require.ErrorIs(t, got[2].FieldErr, ErrCorrupt)
}

func TestHeaderErrors(t *testing.T) {
	t.Parallel()
	b, _ := sampleFile(t)
	cases := []struct {
		name  string
		patch func(b []byte)
		want  error
	}{
		{"signature", func(b []byte) { b[0] = 'X' }, ErrCorrupt},
		{"unknown incompatible flag", func(b []byte) { le.PutUint32(b[12:], le.Uint32(b[12:])|1<<9) }, ErrUnsupported},
		{"header size beyond file", func(b []byte) { le.PutUint64(b[88:], 1<<40) }, ErrCorrupt},
		{"header size too small", func(b []byte) { le.PutUint64(b[88:], 16) }, ErrCorrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := append([]byte(nil), b...)
			tc.patch(c)
			_, err := NewReader(BytesSource(c))
			require.ErrorIs(t, err, tc.want)
		})
	}
	_, err := NewReader(BytesSource(b[:100]))
	require.ErrorIs(t, err, ErrCorrupt)
}

// TestAppend reads a file while systemd's writer appends to it.
func TestAppend(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "system.journal")
	entries := journaltest.Generate(3, 300, 8, 1_700_000_000_000_000)
	journaltest.Write(t, path, entries[:100], nil)
	r, err := Open(path)
	require.NoError(t, err)
	defer func() { _ = r.Close() }()
	var seqs []uint64
	readNew := func() {
		for {
			e, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			require.NoError(t, err)
			seqs = append(seqs, e.Seqnum)
		}
	}
	readNew()
	require.Len(t, seqs, 100)
	journaltest.Write(t, path, entries[100:250], nil)
	readNew()
	journaltest.Write(t, path, entries[250:], nil)
	readNew()
	require.Len(t, seqs, 300)
	for i, s := range seqs {
		require.Equal(t, uint64(i+1), s)
	}
	require.Equal(t, StateOffline, r.Header().State)
}

func FuzzReader(f *testing.F) {
	if b, _ := sampleFileOrNil(f); b != nil {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(Signature))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, _, _ := drain(t, BytesSource(data))
		for _, e := range got {
			_ = e.Cursor()
		}
	})
}

func sampleFileOrNil(f *testing.F) ([]byte, int) {
	if !journaltest.HaveRemote() {
		return nil, 0
	}
	return sampleFile(f)
}
