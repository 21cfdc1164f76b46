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
		if err := xzDictCheck(src); err != nil {
			return nil, err
		}
		zr, err := xz.ReaderConfig{DictCap: 4096}.NewReader(bytes.NewReader(src))
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
		if n > uint64(len(src)-8)*255+16 { //nolint:gosec // lengths are non-negative and bounded by the input checked here
			return nil, corrupt("lz4: size %d impossible from %d compressed bytes", n, len(src)-8)
		}
		out := make([]byte, n)
		got, err := lz4.UncompressBlock(src[8:], out)
		if err != nil {
			return nil, corrupt("lz4: %v", err)
		}
		if uint64(got) != n { //nolint:gosec // lengths are non-negative and bounded by the input checked here
			return nil, corrupt("lz4: %d bytes, header says %d", got, n)
		}
		return out, nil
	}
	return nil, corrupt("object flags %#x: more than one compression", flag)
}

// xzDictCheck reads the LZMA2 dictionary size of an xz stream's first block and refuses one
// above MaxDataSize: the decoder allocates the whole dictionary up front, so a hostile header
// could otherwise ask for gigabytes. (systemd's preset uses 256 KiB or less.)
func xzDictCheck(src []byte) error {
	// Stream header: 12 bytes. Block header: size byte (real size (b+1)*4), flags byte, then
	// optional compressed and uncompressed sizes (varints), then the filter flags.
	if len(src) < 14 || src[12] == 0 {
		return corrupt("xz: no block")
	}
	hdr := src[12:]
	hsize := (int(hdr[0]) + 1) * 4
	if hsize > len(hdr) {
		return corrupt("xz: block header beyond the data")
	}
	hdr = hdr[:hsize]
	flags := hdr[1]
	pos := 2
	varint := func() (uint64, bool) {
		var v uint64
		for i := 0; i < 9 && pos < len(hdr); i++ {
			b := hdr[pos]
			pos++
			v |= uint64(b&0x7f) << (7 * i)
			if b&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	for _, present := range []bool{flags&0x40 != 0, flags&0x80 != 0} {
		if present {
			if _, ok := varint(); !ok {
				return corrupt("xz: bad block header")
			}
		}
	}
	nfilters := int(flags&3) + 1
	for range nfilters {
		id, ok1 := varint()
		psize, ok2 := varint()
		if !ok1 || !ok2 || psize > uint64(len(hdr)-pos) { //nolint:gosec // lengths are non-negative and bounded by the input checked here
			return corrupt("xz: bad filter flags")
		}
		if id == 0x21 && psize == 1 {
			b := hdr[pos]
			if b > 40 {
				return corrupt("xz: bad dictionary size")
			}
			dict := uint64(2|b&1) << (b/2 + 11)
			if dict > MaxDataSize {
				return corrupt("xz: dictionary of %d bytes, more than %d", dict, MaxDataSize)
			}
		}
		pos += int(psize) //nolint:gosec // lengths are non-negative and bounded by the input checked here
	}
	return nil
}
