// SPDX-License-Identifier: Apache-2.0

package objecttrace

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/trace"
)

// Errors returned by the decoders; wrapped with details, test with errors.Is.
var (
	// ErrMalformed is a value that is neither a W3C traceparent nor a binary span context.
	ErrMalformed = errors.New("malformed span context")
	// ErrInvalidIDs is a well-formed value whose trace or span id is all zeros.
	ErrInvalidIDs = errors.New("span context with an all-zero trace or span id")
)

const (
	// traceparentLen is the length of a version 00 traceparent: 2+1+32+1+16+1+2.
	traceparentLen = 55
	// binaryLen is the binary span context: version, then field 0 (trace id), field 1 (span
	// id) and field 2 (trace options), each after its one-byte field id.
	binaryLen = 1 + 1 + 16 + 1 + 8 + 1 + 1
	// maxVersion is the highest traceparent version; ff is forbidden.
	maxVersion = 0xfe
	// knownFlags are the trace flags W3C Trace Context defines: sampled and random.
	knownFlags = trace.FlagsSampled | trace.FlagsRandom
)

// ParseTraceparent decodes a W3C traceparent value (version-traceid-parentid-flags). It follows
// W3C Trace Context: lower-case hex only, version ff forbidden, version 00 exactly 55 characters
// with no flag bits other than sampled and random, a higher version possibly followed by
// "-" and fields it does not know. The result is marked remote. tracestate, when non-empty, is
// attached if it parses and ignored if it does not, as the specification requires.
func ParseTraceparent(traceparent, tracestate string) (trace.SpanContext, error) {
	s := traceparent
	if len(s) < traceparentLen || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return trace.SpanContext{}, fmt.Errorf("%w: traceparent %q", ErrMalformed, clip(traceparent))
	}
	var version, flags [1]byte
	var cfg trace.SpanContextConfig
	if !lowerHex(version[:], s[0:2]) || !lowerHex(cfg.TraceID[:], s[3:35]) ||
		!lowerHex(cfg.SpanID[:], s[36:52]) || !lowerHex(flags[:], s[53:55]) {
		return trace.SpanContext{}, fmt.Errorf("%w: traceparent %q: not lower-case hex", ErrMalformed, clip(traceparent))
	}
	switch {
	case version[0] > maxVersion:
		return trace.SpanContext{}, fmt.Errorf("%w: traceparent version ff", ErrMalformed)
	case version[0] == 0 && len(s) != traceparentLen:
		return trace.SpanContext{}, fmt.Errorf("%w: traceparent version 00 with %d characters", ErrMalformed, len(s))
	case version[0] == 0 && trace.TraceFlags(flags[0])&^knownFlags != 0:
		return trace.SpanContext{}, fmt.Errorf("%w: traceparent version 00 with unknown flags %02x", ErrMalformed, flags[0])
	case len(s) > traceparentLen && s[traceparentLen] != '-':
		return trace.SpanContext{}, fmt.Errorf("%w: traceparent %q", ErrMalformed, clip(traceparent))
	}
	cfg.TraceFlags = trace.TraceFlags(flags[0]) & knownFlags
	cfg.Remote = true
	if tracestate != "" {
		if ts, err := trace.ParseTraceState(tracestate); err == nil {
			cfg.TraceState = ts
		}
	}
	sc := trace.NewSpanContext(cfg)
	if !sc.IsValid() {
		return trace.SpanContext{}, ErrInvalidIDs
	}
	return sc, nil
}

// FormatTraceparent encodes sc as a version 00 traceparent, keeping only the sampled and
// random flags. It returns "" for an invalid span context.
func FormatTraceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	var b [traceparentLen]byte
	b[0], b[1], b[2] = '0', '0', '-'
	tid, sid := sc.TraceID(), sc.SpanID()
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{byte(sc.TraceFlags() & knownFlags)})
	return string(b[:])
}

// DecodeBinary decodes the base64 binary span context of the original admission webhook:
// version 0, field 0 with the 16-byte trace id, field 1 with the 8-byte span id, field 2 with
// one byte of trace options (bit 0: sampled); 29 bytes, 40 characters of standard base64 (the
// padding may be left out). Only the sampled option is kept. The result is marked remote.
func DecodeBinary(s string) (trace.SpanContext, error) {
	var b [binaryLen + 1]byte // 40 characters without padding would decode to 30 bytes
	enc := base64.StdEncoding
	if len(s) == base64.RawStdEncoding.EncodedLen(binaryLen) {
		enc = base64.RawStdEncoding
	} else if len(s) != base64.StdEncoding.EncodedLen(binaryLen) {
		return trace.SpanContext{}, fmt.Errorf("%w: binary span context of %d characters, want 40", ErrMalformed, len(s))
	}
	if n, err := enc.Strict().Decode(b[:], []byte(s)); err != nil || n != binaryLen {
		return trace.SpanContext{}, fmt.Errorf("%w: binary span context is not base64", ErrMalformed)
	}
	if b[0] != 0 || b[1] != 0 || b[18] != 1 || b[27] != 2 {
		return trace.SpanContext{}, fmt.Errorf("%w: binary span context: version %d, field ids %d %d %d, want 0, 0 1 2",
			ErrMalformed, b[0], b[1], b[18], b[27])
	}
	var cfg trace.SpanContextConfig
	copy(cfg.TraceID[:], b[2:18])
	copy(cfg.SpanID[:], b[19:27])
	cfg.TraceFlags = trace.TraceFlags(b[28]) & trace.FlagsSampled
	cfg.Remote = true
	sc := trace.NewSpanContext(cfg)
	if !sc.IsValid() {
		return trace.SpanContext{}, ErrInvalidIDs
	}
	return sc, nil
}

// EncodeBinary encodes sc in the webhook's binary form (see DecodeBinary), padded standard
// base64. It returns "" for an invalid span context.
func EncodeBinary(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	var b [binaryLen]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	copy(b[2:18], tid[:])
	b[18] = 1
	copy(b[19:27], sid[:])
	b[27] = 2
	b[28] = byte(sc.TraceFlags() & trace.FlagsSampled)
	return base64.StdEncoding.EncodeToString(b[:])
}

// DecodeContextValue decodes a trace.kubernetes.io/context value: a W3C traceparent or the
// binary span context (DecodeBinary), told apart by length and the traceparent's dashes.
func DecodeContextValue(v string) (trace.SpanContext, error) {
	if len(v) >= traceparentLen && v[2] == '-' {
		return ParseTraceparent(v, "")
	}
	return DecodeBinary(v)
}

// lowerHex decodes s, lower-case hex of exactly 2*len(dst) characters, into dst.
func lowerHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := 0; i < len(s); i += 2 {
		hi, ok1 := nibble(s[i])
		lo, ok2 := nibble(s[i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i/2] = hi<<4 | lo
	}
	return true
}

func nibble(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// clip shortens a value quoted in an error: annotation values are written by anyone who can
// edit the object.
func clip(s string) string {
	const limit = 64
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}
