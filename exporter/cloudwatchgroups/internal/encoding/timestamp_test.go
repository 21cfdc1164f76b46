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
