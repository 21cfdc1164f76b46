// SPDX-License-Identifier: Apache-2.0

package encoding

import (
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestAppendTimestamp(t *testing.T) {
	tests := []struct {
		name string
		ts   pcommon.Timestamp
		want string
	}{
		{name: "epoch", ts: 1, want: "1970-01-01T00:00:00.000000001Z"},
		{name: "whole second", ts: 1_700_000_000_000_000_000, want: "2023-11-14T22:13:20Z"},
		{name: "trailing zeros trimmed", ts: 1_700_000_000_120_000_000, want: "2023-11-14T22:13:20.12Z"},
		{name: "leap day", ts: pcommon.Timestamp(time.Date(2024, 2, 29, 23, 59, 59, 999_999_999, time.UTC).UnixNano()), want: "2024-02-29T23:59:59.999999999Z"},
		{name: "end of a century year without a leap day", ts: pcommon.Timestamp(time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano()), want: "2100-03-01T00:00:00Z"},
		{name: "new year", ts: pcommon.Timestamp(time.Date(2026, 12, 31, 23, 59, 59, 500, time.UTC).UnixNano()), want: "2026-12-31T23:59:59.0000005Z"},
		{name: "largest int64", ts: math.MaxInt64, want: "2262-04-11T23:47:16.854775807Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(appendTimestamp(nil, tt.ts)); got != tt.want {
				t.Errorf("appendTimestamp(%d) = %s, want %s", uint64(tt.ts), got, tt.want)
			}
		})
	}
}

// FuzzAppendTimestamp: the same text as time.RFC3339Nano for every timestamp.
func FuzzAppendTimestamp(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(1_700_000_000_123_456_789))
	f.Add(uint64(math.MaxInt64))
	f.Add(uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, ts uint64) {
		want := pcommon.Timestamp(ts).AsTime().UTC().AppendFormat([]byte("x"), time.RFC3339Nano)
		if got := appendTimestamp([]byte("x"), pcommon.Timestamp(ts)); string(got) != string(want) {
			t.Fatalf("appendTimestamp(%d) = %s, want %s", ts, got, want)
		}
	})
}

// An encoder keeps the text of the last second it wrote: each timestamp of a sequence that
// stays in, leaves and comes back to a second is still its own.
func TestEncoderTimestampKeepsTheLastSecond(t *testing.T) {
	const sec = 1_700_000_000_000_000_000 // 2023-11-14T22:13:20Z
	steps := []struct {
		ts   pcommon.Timestamp
		want string
	}{
		{ts: sec + 5, want: "2023-11-14T22:13:20.000000005Z"},
		{ts: sec + 120_000_000, want: "2023-11-14T22:13:20.12Z"},
		{ts: sec, want: "2023-11-14T22:13:20Z"},
		{ts: sec + 1_000_000_000, want: "2023-11-14T22:13:21Z"},
		{ts: sec + 999_999_999, want: "2023-11-14T22:13:20.999999999Z"},
		{ts: sec + 86_400_000_000_000, want: "2023-11-15T22:13:20Z"},
		{ts: math.MaxUint64, want: "1969-12-31T23:59:59.999999999Z"}, // as AsTime has it
		{ts: sec + 86_400_000_000_001, want: "2023-11-15T22:13:20.000000001Z"},
		{ts: 1, want: "1970-01-01T00:00:00.000000001Z"},
		{ts: math.MaxInt64, want: "2262-04-11T23:47:16.854775807Z"},
	}
	var e Encoder
	for i, st := range steps {
		if got := string(e.appendTimestamp([]byte("x"), st.ts)); got != "x"+st.want {
			t.Errorf("step %d: appendTimestamp(%d) = %s, want x%s", i, uint64(st.ts), got, st.want)
		}
	}
}

// FuzzEncoderTimestamp: a timestamp written after another one is the same text as
// time.RFC3339Nano, whatever second the encoder kept.
func FuzzEncoderTimestamp(f *testing.F) {
	f.Add(uint64(1_700_000_000_123_456_789), uint64(1_700_000_000_987_654_321))
	f.Add(uint64(1_700_000_000_123_456_789), uint64(1_700_000_001_000_000_000))
	f.Add(uint64(math.MaxUint64), uint64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, first, ts uint64) {
		var e Encoder
		e.appendTimestamp(nil, pcommon.Timestamp(first))
		want := pcommon.Timestamp(ts).AsTime().UTC().AppendFormat([]byte("x"), time.RFC3339Nano)
		if got := e.appendTimestamp([]byte("x"), pcommon.Timestamp(ts)); string(got) != string(want) {
			t.Fatalf("after %d: appendTimestamp(%d) = %s, want %s", first, ts, got, want)
		}
	})
}

func BenchmarkAppendTimestamp(b *testing.B) {
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = appendTimestamp(buf[:0], 1_700_000_000_123_456_789)
	}
}

func BenchmarkAppendFormatRFC3339Nano(b *testing.B) {
	buf := make([]byte, 0, 64)
	ts := pcommon.Timestamp(1_700_000_000_123_456_789)
	for b.Loop() {
		buf = ts.AsTime().UTC().AppendFormat(buf[:0], time.RFC3339Nano)
	}
}
