// SPDX-License-Identifier: Apache-2.0

package journalfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver/internal/journaltest"
)

// readAll reads every entry of a file with this package.
func readAll(t *testing.T, path string) []*Entry {
	t.Helper()
	r, err := Open(path)
	require.NoError(t, err)
	defer func() { _ = r.Close() }()
	var out []*Entry
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		require.Zero(t, e.BadFields, "entry %d: %v", e.Seqnum, e.FieldErr)
		out = append(out, e)
	}
}

// compareWithJournalctl checks every entry, field by field, against journalctl's reading of the
// same file and returns the number of entries compared.
func compareWithJournalctl(t *testing.T, path string) int {
	t.Helper()
	want := journaltest.Read(t, path)
	got := readAll(t, path)
	require.Len(t, got, len(want))
	for i, e := range got {
		w := want[i]
		require.Equal(t, w.String("__CURSOR"), e.Cursor(), "entry %d", i)
		require.Equal(t, w.Uint("__REALTIME_TIMESTAMP"), e.Realtime, "entry %d", i)
		require.Equal(t, w.Uint("__MONOTONIC_TIMESTAMP"), e.Monotonic, "entry %d", i)
		require.Equal(t, w.String("_BOOT_ID"), e.BootID.String(), "entry %d", i)
		fields := map[string][][]byte{}
		for _, f := range e.Fields {
			if f.Name != "_BOOT_ID" {
				fields[f.Name] = append(fields[f.Name], f.Value)
			}
		}
		wf := map[string][][]byte{}
		for k, v := range w {
			if k != "_BOOT_ID" && k[:2] != "__" {
				wf[k] = v
			}
		}
		require.Equal(t, wf, fields, "entry %d (%s)", i, e.Cursor())
	}
	return len(got)
}

func TestDifferentialJournalctl(t *testing.T) {
	t.Parallel()
	entries := journaltest.Generate(1, 2000, 60, 1_700_000_000_000_000)
	cases := []struct {
		name   string
		env    []string
		args   []string
		flags  uint32 // incompatible flags the file must have
		recomp uint8  // recompress large DATA objects with xz or lz4 (see recompress)
	}{
		{name: "compact zstd", flags: IncompatCompact | IncompatCompressedZSTD | IncompatKeyedHash},
		{name: "regular zstd", env: []string{"SYSTEMD_JOURNAL_COMPACT=0"}, flags: IncompatCompressedZSTD | IncompatKeyedHash},
		{name: "compact plain", args: []string{"--compress=no"}, flags: IncompatCompact | IncompatKeyedHash},
		{name: "regular plain unkeyed", env: []string{"SYSTEMD_JOURNAL_COMPACT=0", "SYSTEMD_JOURNAL_KEYED_HASH=0"}, args: []string{"--compress=no"}},
		{name: "compact xz", args: []string{"--compress=no"}, flags: IncompatCompact | IncompatKeyedHash, recomp: objCompressedXZ},
		{name: "regular lz4", env: []string{"SYSTEMD_JOURNAL_COMPACT=0"}, args: []string{"--compress=no"}, flags: IncompatKeyedHash, recomp: objCompressedLZ4},
		{name: "compact lz4", args: []string{"--compress=no"}, flags: IncompatCompact | IncompatKeyedHash, recomp: objCompressedLZ4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "system.journal")
			// Two writes: the second appends to the file like journald after a restart.
			journaltest.Write(t, path, entries[:1000], tc.env, tc.args...)
			journaltest.Write(t, path, entries[1000:], tc.env, tc.args...)
			r, err := Open(path)
			require.NoError(t, err)
			h := r.Header()
			require.NoError(t, r.Close())
			require.Equal(t, tc.flags, h.IncompatibleFlags)
			require.Equal(t, uint64(len(entries)), h.NEntries)
			if tc.recomp != 0 {
				n := recompress(t, path, tc.recomp)
				require.Greater(t, n, 300, "large DATA objects recompressed")
			}
			n := compareWithJournalctl(t, path)
			require.Equal(t, len(entries), n)
			t.Logf("%s: %d entries equal to journalctl's, field by field", tc.name, n)
		})
	}
}

// recompress rewrites, in place, every uncompressed DATA object of 512 bytes or more whose
// payload compresses smaller with xz or lz4, in the exact form systemd writes (xz: a stream;
// lz4: the le64 size, then one block), and sets the header's flag. The object keeps its place;
// its size shrinks and the bytes after it are left alone, which readers following offsets (both
// journalctl and this package) never look at. journalctl then decompresses with liblzma or
// liblz4: the reference for this package's pure-Go decoders. It returns the objects rewritten.
func recompress(t *testing.T, path string, flag uint8) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	compact := le.Uint32(b[12:])&IncompatCompact != 0
	payloadOff := uint64(dataRegular)
	if compact {
		payloadOff = dataCompact
	}
	tail := le.Uint64(b[136:])
	n := 0
	for off := le.Uint64(b[88:]); off != 0 && off <= tail; {
		typ, flags, size := b[off], b[off+1], le.Uint64(b[off+8:])
		require.GreaterOrEqual(t, size, uint64(objHeaderSize))
		if typ == objData && flags == 0 && size-payloadOff >= 512 {
			payload := b[off+payloadOff : off+size]
			c := compressed(t, flag, payload)
			if len(c) > 0 && uint64(len(c)) < size-payloadOff {
				copy(b[off+payloadOff:], c)
				b[off+1] = flag
				le.PutUint64(b[off+8:], payloadOff+uint64(len(c)))
				n++
			}
		}
		off += (size + 7) &^ 7
	}
	hf := map[uint8]uint32{objCompressedXZ: IncompatCompressedXZ, objCompressedLZ4: IncompatCompressedLZ4}[flag]
	le.PutUint32(b[12:], le.Uint32(b[12:])|hf)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return n
}
