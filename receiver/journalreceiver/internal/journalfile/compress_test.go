// SPDX-License-Identifier: Apache-2.0

package journalfile

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

func compressed(t testing.TB, flag uint8, payload []byte) []byte {
	switch flag {
	case objCompressedZSTD:
		enc, err := zstd.NewWriter(nil)
		require.NoError(t, err)
		return enc.EncodeAll(payload, nil)
	case objCompressedXZ:
		var buf bytes.Buffer
		w, err := xz.WriterConfig{DictCap: 64 << 10}.NewWriter(&buf)
		require.NoError(t, err)
		_, _ = w.Write(payload)
		require.NoError(t, w.Close())
		return buf.Bytes()
	default:
		c := make([]byte, 8+lz4.CompressBlockBound(len(payload)))
		binary.LittleEndian.PutUint64(c, uint64(len(payload)))
		n, err := lz4.CompressBlock(payload, c[8:], nil)
		require.NoError(t, err)
		return c[:8+n]
	}
}

func TestDecompress(t *testing.T) {
	t.Parallel()
	payload := []byte("MESSAGE=" + string(bytes.Repeat([]byte("kubelet "), 200)))
	for _, flag := range []uint8{objCompressedZSTD, objCompressedXZ, objCompressedLZ4} {
		c := compressed(t, flag, payload)
		got, err := decompress(flag, c)
		require.NoError(t, err)
		require.Equal(t, payload, got)
		// Every cut is an error wrapping ErrCorrupt, never a panic.
		for cut := range len(c) - 1 {
			_, err := decompress(flag, c[:cut])
			if err != nil {
				require.ErrorIs(t, err, ErrCorrupt, "flag %d cut %d", flag, cut)
			}
		}
	}
	_, err := decompress(objCompressedXZ|objCompressedLZ4, []byte("x"))
	require.ErrorIs(t, err, ErrCorrupt)
	// An lz4 size prefix claiming more than the block can hold.
	c := compressed(t, objCompressedLZ4, payload)
	binary.LittleEndian.PutUint64(c, MaxDataSize+1)
	_, err = decompress(objCompressedLZ4, c)
	require.ErrorContains(t, err, "larger than")
	// An xz header asking for a 1.5 GiB dictionary.
	c = compressed(t, objCompressedXZ, payload)
	require.Equal(t, byte(0x21), c[12+2]) // filter id: LZMA2 (no optional sizes in the header)
	c[12+4] = 40
	_, err = decompress(objCompressedXZ, c)
	require.ErrorContains(t, err, "dictionary")
}

func FuzzDecompress(f *testing.F) {
	payload := []byte("MESSAGE=" + string(bytes.Repeat([]byte("containerd "), 80)))
	for _, flag := range []uint8{objCompressedZSTD, objCompressedXZ, objCompressedLZ4} {
		f.Add(flag, compressed(f, flag, payload))
	}
	f.Fuzz(func(t *testing.T, flag uint8, data []byte) {
		out, err := decompress(flag&objCompressedMask, data)
		if err == nil {
			require.LessOrEqual(t, len(out), MaxDataSize)
		}
	})
}
