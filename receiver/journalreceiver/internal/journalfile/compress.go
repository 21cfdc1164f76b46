// SPDX-License-Identifier: Apache-2.0

package journalfile

import (
	"bytes"
	"encoding/binary"

	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
)

// zstdDec is shared: DecodeAll is safe for concurrent use.
var zstdDec, _ = zstd.NewReader(nil,
	zstd.WithDecoderConcurrency(1),
	zstd.WithDecoderMaxMemory(MaxDataSize),
	zstd.WithDecoderMaxWindow(MaxDataSize))

// decompress returns the payload of a compressed DATA object. systemd writes: for xz a whole
// .xz stream; for lz4 the uncompressed size as a little-endian 64-bit number, then one LZ4
// block; for zstd one zstd frame.
func decompress(flag uint8, src []byte) ([]byte, error) {
	switch flag {
	case objCompressedZSTD:
		out, err := zstdDec.DecodeAll(src, nil)
		if err != nil {
			return nil, corrupt("zstd: %v", err)
		}
		if len(out) > MaxDataSize {
			return nil, corrupt("zstd payload larger than %d bytes", MaxDataSize)
		}
		return out, nil
	case objCompressedXZ:
		zr, err := xz.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, corrupt("xz: %v", err)
		}
		out, err := io.ReadAll(io.LimitReader(zr, MaxDataSize+1))
		if err != nil {
			return nil, corrupt("xz: %v", err)
		}
		if len(out) > MaxDataSize {
			return nil, corrupt("xz payload larger than %d bytes", MaxDataSize)
		}
		return out, nil
	case objCompressedLZ4:
		if len(src) < 8 {
			return nil, corrupt("lz4: %d bytes, no size prefix", len(src))
		}
		n := binary.LittleEndian.Uint64(src)
		if n > MaxDataSize {
			return nil, corrupt("lz4: size %d larger than %d", n, MaxDataSize)
		}
		// An LZ4 block expands at most about 255 times.
		if n > uint64(len(src)-8)*255+16 {
			return nil, corrupt("lz4: size %d impossible from %d compressed bytes", n, len(src)-8)
		}
		out := make([]byte, n)
		got, err := lz4.UncompressBlock(src[8:], out)
		if err != nil {
			return nil, corrupt("lz4: %v", err)
		}
		if uint64(got) != n {
			return nil, corrupt("lz4: %d bytes, header says %d", got, n)
		}
		return out, nil
	}
	return nil, corrupt("object flags %#x: more than one compression", flag)
}
