// SPDX-License-Identifier: Apache-2.0

package objspans

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/trace"
)

func TestIDsAreDerivedFromUIDGenerationAndWhat(t *testing.T) {
	sum := sha256.Sum256([]byte("u-1/3/root"))
	if got := TraceID("u-1", 3); got != pcommon.TraceID(sum[:16]) {
		t.Fatalf("trace id %s, want the first 16 bytes of sha256(u-1/3/root)", got)
	}
	if got := RootSpanID("u-1", 3); got != pcommon.SpanID(sum[16:24]) {
		t.Fatalf("root span id %s, want bytes 16-24 of the same sum", got)
	}
	ready := sha256.Sum256([]byte("u-1/3/Ready"))
	if got := SpanID("u-1", 3, "Ready"); got != pcommon.SpanID(ready[:8]) {
		t.Fatalf("span id %s", got)
	}
	// 0 and 1 are both the object as created: Events (no generation) and Pods agree
	if TraceID("u-1", 0) != TraceID("u-1", 1) {
		t.Fatal("generation 0 and 1 must give one trace")
	}
	if TraceID("u-1", 1) == TraceID("u-1", 2) || TraceID("u-1", 1) == TraceID("u-2", 1) {
		t.Fatal("another generation or uid must give another trace")
	}
}

// traceWithRandom is a trace id whose last 56 bits are r.
func traceWithRandom(r uint64) pcommon.TraceID {
	var id pcommon.TraceID
	id[0] = 0xff
	binary.BigEndian.PutUint64(id[8:], r)
	return id
}

func ctx(t *testing.T, traceID pcommon.TraceID, sampled bool) trace.SpanContext {
	t.Helper()
	var flags trace.TraceFlags
	if sampled {
		flags = trace.FlagsSampled
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID(traceID), SpanID: trace.SpanID{1}, TraceFlags: flags})
}

func TestDecide(t *testing.T) {
	const half = uint64(1) << 55 // the threshold of ratio 0.5
	low, high := traceWithRandom(half-1), traceWithRandom(half)
	other := traceWithRandom(7)
	tests := []struct {
		name  string
		cfg   SamplingConfig
		kind  string
		sc    func(t *testing.T) trace.SpanContext
		trace pcommon.TraceID
		want  Decision
	}{
		{"no context, default keeps all", NewDefaultSamplingConfig(), "Pod", nil, low, Sample},
		{"no context, ratio 0", SamplingConfig{}, "Pod", nil, high, DropRatio},
		{"no context, half, below threshold", SamplingConfig{Ratio: 0.5}, "Pod", nil, low, DropRatio},
		{"no context, half, at threshold", SamplingConfig{Ratio: 0.5}, "Pod", nil, high, Sample},
		{"kind overrides ratio: dropped", SamplingConfig{Ratio: 1, Kinds: map[string]float64{"Node": 0}}, "Node", nil, high, DropRatio},
		{"kind overrides ratio: other kind kept", SamplingConfig{Ratio: 1, Kinds: map[string]float64{"Node": 0}}, "Pod", nil, high, Sample},
		{"only with context, none", SamplingConfig{Ratio: 1, OnlyWithContext: true}, "Pod", nil, high, DropNoContext},
		{
			"parented under a sampled context: ratio does not apply",
			SamplingConfig{Ratio: 0, OnlyWithContext: true},
			"Pod",
			func(t *testing.T) trace.SpanContext { return ctx(t, low, true) }, low, Sample,
		},
		{
			"parented under an unsampled context", NewDefaultSamplingConfig(), "Pod",
			func(t *testing.T) trace.SpanContext { return ctx(t, low, false) }, low, DropUnsampledParent,
		},
		{
			"linked to an unsampled context", NewDefaultSamplingConfig(), "Pod",
			func(t *testing.T) trace.SpanContext { return ctx(t, other, false) }, high, DropUnsampledParent,
		},
		{
			"linked to a sampled context: own trace, ratio applies",
			SamplingConfig{Ratio: 0.5, OnlyWithContext: true},
			"Pod",
			func(t *testing.T) trace.SpanContext { return ctx(t, other, true) }, low, DropRatio,
		},
		{
			"linked to a sampled context: kept by ratio",
			SamplingConfig{Ratio: 0.5, OnlyWithContext: true},
			"Pod",
			func(t *testing.T) trace.SpanContext { return ctx(t, other, true) }, high, Sample,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sc trace.SpanContext
			if tt.sc != nil {
				sc = tt.sc(t)
			}
			if got := tt.cfg.Decide(tt.kind, sc, tt.trace); got != tt.want {
				t.Fatalf("Decide = %s, want %s", got, tt.want)
			}
		})
	}
}

// A ratio keeps about that fraction of derived trace ids, and a trace kept at a ratio is kept
// at every higher one.
func TestRatioIsConsistent(t *testing.T) {
	cfg := func(r float64) SamplingConfig { return SamplingConfig{Ratio: r} }
	const n = 20000
	kept := map[float64]int{}
	for i := range n {
		id := TraceID("uid-"+strconv.Itoa(i), 1)
		prev := true
		for _, r := range []float64{0.9, 0.5, 0.1} {
			c := cfg(r)
			k := c.Decide("Pod", trace.SpanContext{}, id) == Sample
			if k && !prev {
				t.Fatalf("trace %s kept at %v but not at a higher ratio", id, r)
			}
			prev = k
			if k {
				kept[r]++
			}
		}
	}
	for r, k := range kept {
		if got := float64(k) / n; got < r-0.02 || got > r+0.02 {
			t.Errorf("ratio %v kept %.3f of the traces", r, got)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  SamplingConfig
		ok   bool
	}{
		{"default", NewDefaultSamplingConfig(), true},
		{"zero", SamplingConfig{}, true},
		{"above one", SamplingConfig{Ratio: 1.5}, false},
		{"negative kind", SamplingConfig{Ratio: 1, Kinds: map[string]float64{"Pod": -0.1}}, false},
		{"empty kind", SamplingConfig{Ratio: 1, Kinds: map[string]float64{"": 0.1}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); (err == nil) != tt.ok {
				t.Fatalf("Validate = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
