// SPDX-License-Identifier: Apache-2.0

package objecttrace

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

var (
	testTraceID = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	testSpanID  = trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
)

func testSC(flags trace.TraceFlags) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: testTraceID, SpanID: testSpanID, TraceFlags: flags, Remote: true})
}

// checkDecoded checks a decoder's result: wantErr, or the test ids with wantFlags, remote.
func checkDecoded(t *testing.T, sc trace.SpanContext, err error, wantFlags trace.TraceFlags, wantErr error) {
	t.Helper()
	if wantErr != nil {
		require.ErrorIs(t, err, wantErr)
		assert.False(t, sc.IsValid())
		return
	}
	require.NoError(t, err)
	assert.Equal(t, testTraceID, sc.TraceID())
	assert.Equal(t, testSpanID, sc.SpanID())
	assert.Equal(t, wantFlags, sc.TraceFlags())
	assert.True(t, sc.IsRemote())
}

func TestParseTraceparent(t *testing.T) {
	t.Parallel()
	const tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tests := []struct {
		name      string
		in        string
		wantFlags trace.TraceFlags
		wantErr   error
	}{
		{"sampled", "00-" + tid + "-" + sid + "-01", trace.FlagsSampled, nil},
		{"not sampled", "00-" + tid + "-" + sid + "-00", 0, nil},
		{"sampled and random", "00-" + tid + "-" + sid + "-03", trace.FlagsSampled | trace.FlagsRandom, nil},
		{"version 00 with unknown flag", "00-" + tid + "-" + sid + "-09", 0, ErrMalformed},
		{"future version, more fields", "cc-" + tid + "-" + sid + "-09-what-comes-next", trace.FlagsSampled, nil},
		{"future version, exact length", "01-" + tid + "-" + sid + "-01", trace.FlagsSampled, nil},
		{"future version, glued field", "01-" + tid + "-" + sid + "-01x", 0, ErrMalformed},
		{"version ff", "ff-" + tid + "-" + sid + "-01", 0, ErrMalformed},
		{"version 00 with trailing field", "00-" + tid + "-" + sid + "-01-x", 0, ErrMalformed},
		{"upper-case hex", "00-4BF92F3577B34DA6A3CE929D0E0E4736-" + sid + "-01", 0, ErrMalformed},
		{"short trace id", "00-" + tid[:30] + "-" + sid + "-01", 0, ErrMalformed},
		{"zero trace id", "00-00000000000000000000000000000000-" + sid + "-01", 0, ErrInvalidIDs},
		{"zero span id", "00-" + tid + "-0000000000000000-01", 0, ErrInvalidIDs},
		{"empty", "", 0, ErrMalformed},
		{"spaces", " 00-" + tid + "-" + sid + "-01", 0, ErrMalformed},
		{"binary value", "AABL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3AgE=", 0, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, err := ParseTraceparent(tt.in, "")
			checkDecoded(t, sc, err, tt.wantFlags, tt.wantErr)
		})
	}
}

func TestParseTraceparentTracestate(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	sc, err := ParseTraceparent(tp, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
	require.NoError(t, err)
	assert.Equal(t, "t61rcWkgMzE", sc.TraceState().Get("congo"))

	sc, err = ParseTraceparent(tp, "not a tracestate")
	require.NoError(t, err, "a bad tracestate must not cost the traceparent")
	assert.Equal(t, 0, sc.TraceState().Len())
	assert.Equal(t, testTraceID, sc.TraceID())
}

func TestFormatTraceparent(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", FormatTraceparent(testSC(trace.FlagsSampled)))
	assert.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02", FormatTraceparent(testSC(trace.FlagsRandom|0x80)))
	assert.Empty(t, FormatTraceparent(trace.SpanContext{}))
}

func TestBinary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		wantFlags trace.TraceFlags
		wantErr   error
	}{
		// 00 | 00 4bf9...4736 | 01 00f0...02b7 | 02 01
		{"sampled", "AABL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3AgE=", trace.FlagsSampled, nil},
		{"not sampled", "AABL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3AgA=", 0, nil},
		{"padding left out", "AABL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3AgE", trace.FlagsSampled, nil},
		{"url alphabet", "AABL-S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3AgE=", 0, ErrMalformed},
		{"version 1", "AQBL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3AgE=", 0, ErrMalformed},
		{"span id field id 2", "AABL+S81d7NNpqPOkp0ODkc2AgDwZ6oLqQK3AgE=", 0, ErrMalformed},
		{"40 characters without padding", "0000000000000000000000000000000000000000", 0, ErrMalformed},
		{"too short", "AABL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3", 0, ErrMalformed},
		{"zero ids", "AAAAAAAAAAAAAAAAAAAAAAAAAQAAAAAAAAAAAgE=", 0, ErrInvalidIDs},
		{"not base64", "AABL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3Ag!=", 0, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, err := DecodeBinary(tt.in)
			checkDecoded(t, sc, err, tt.wantFlags, tt.wantErr)
		})
	}
	assert.Equal(t, "AABL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3AgE=", EncodeBinary(testSC(trace.FlagsSampled|trace.FlagsRandom)))
	assert.Len(t, EncodeBinary(testSC(0)), 40)
	assert.Empty(t, EncodeBinary(trace.SpanContext{}))
}

func TestDecodeContextValue(t *testing.T) {
	t.Parallel()
	for _, v := range []string{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"AABL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3AgE=",
	} {
		sc, err := DecodeContextValue(v)
		require.NoError(t, err, v)
		assert.True(t, sc.Equal(testSC(trace.FlagsSampled)), v)
	}
	_, err := DecodeContextValue("garbage")
	require.ErrorIs(t, err, ErrMalformed)
}

// FuzzParseTraceparent checks the parser against the OpenTelemetry W3C propagator: both accept
// the same values and decode them to the same span context.
func FuzzParseTraceparent(f *testing.F) {
	for _, s := range []string{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-x",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-04",
	} {
		f.Add(s, "a=b")
	}
	prop := propagation.TraceContext{}
	f.Fuzz(func(t *testing.T, tp, ts string) {
		got, err := ParseTraceparent(tp, ts)
		carrier := propagation.MapCarrier{"traceparent": tp, "tracestate": ts}
		want := trace.SpanContextFromContext(prop.Extract(context.Background(), carrier))
		if (err == nil) != want.IsValid() {
			t.Fatalf("%q: ParseTraceparent err=%v, propagator valid=%v", tp, err, want.IsValid())
		}
		if err == nil && !got.Equal(want) {
			t.Fatalf("%q %q: got %v, propagator %v", tp, ts, got, want)
		}
		if err == nil && tp[:2] == "00" && FormatTraceparent(got) != tp {
			t.Fatalf("%q does not round-trip: %q", tp, FormatTraceparent(got))
		}
	})
}

// FuzzDecodeContextValue: any value decodes or fails cleanly, and what decodes round-trips
// through the encoding it came in.
func FuzzDecodeContextValue(f *testing.F) {
	f.Add("AABL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3AgE=")
	f.Add("AABL+S81d7NNpqPOkp0ODkc2AQDwZ6oLqQK3AgE")
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Fuzz(func(t *testing.T, v string) {
		sc, err := DecodeContextValue(v)
		if err != nil {
			if sc.IsValid() {
				t.Fatalf("%q: error %v with a valid span context", v, err)
			}
			return
		}
		if !sc.IsValid() || !sc.IsRemote() {
			t.Fatalf("%q: decoded without error to %v", v, sc)
		}
		for _, enc := range []string{EncodeBinary(sc), FormatTraceparent(sc)} {
			back, err := DecodeContextValue(enc)
			if err != nil || back.TraceID() != sc.TraceID() || back.SpanID() != sc.SpanID() || back.IsSampled() != sc.IsSampled() {
				t.Fatalf("%q: re-encoded %q decodes to %v, %v", v, enc, back, err)
			}
		}
	})
}
