// SPDX-License-Identifier: Apache-2.0

package klogparserprocessor

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor/internal/klogline"
	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor/internal/metadata"
)

// goldenCorpus returns every record of the golden inputs.
func goldenCorpus(b *testing.B) []string {
	inputs, err := filepath.Glob(filepath.Join("testdata", "golden", "*.log"))
	require.NoError(b, err)
	var lines []string
	for _, in := range inputs {
		lines = append(lines, readRecords(&testing.T{}, in)...)
	}
	return lines
}

// goldenBatch puts one record per line into a batch observed at goldenObserved.
func goldenBatch(lines []string) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, l := range lines {
		lr := lrs.AppendEmpty()
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(goldenObserved))
		lr.Body().SetStr(l)
	}
	return ld
}

// BenchmarkParseLine measures the parser alone; it reports allocations per extracted
// key/value pair (the target is at most one).
func BenchmarkParseLine(b *testing.B) {
	lines := goldenCorpus(b)
	var p klogline.Parser
	var rec klogline.Record
	ref := goldenObserved
	fields := 0
	for _, l := range lines {
		p.Parse(l, ref, &rec)
		fields += len(rec.Fields)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			p.Parse(l, ref, &rec)
		}
	}
	b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(fields), "fields/op")
}

// BenchmarkProcessor measures the whole processor on the golden corpus, one batch per op.
func BenchmarkProcessor(b *testing.B) {
	lines := goldenCorpus(b)
	in := goldenBatch(lines)
	p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), consumertest.NewNop())
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ld := plog.NewLogs()
		in.CopyTo(ld)
		b.StartTimer()
		if err := p.ConsumeLogs(context.Background(), ld); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "records/s")
}

// countValues counts the values inside a map or slice, nested members included.
func countValues(v pcommon.Value) int {
	n := 0
	switch v.Type() {
	case pcommon.ValueTypeMap:
		for _, e := range v.Map().All() {
			n += 1 + countValues(e)
		}
	case pcommon.ValueTypeSlice:
		for _, e := range v.Slice().All() {
			n += 1 + countValues(e)
		}
	}
	return n
}

// TestAllocationsPerAttribute checks the allocation budget on the golden corpus, counting
// every value the processor extracts (body, attributes, nested members):
//   - the parser allocates at most one per extracted value (in practice only for strings with
//     escapes, joined multi-line values and nested JSON objects);
//   - the processor adds at most a quarter allocation per value beyond what pdata itself
//     needs to store the result: one wrapper per value and one attribute array per record.
func TestAllocationsPerAttribute(t *testing.T) {
	lines := goldenCorpus(&testing.B{})
	in := goldenBatch(lines)
	p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	const runs = 50
	batches := make([]plog.Logs, runs+1)
	for i := range batches {
		batches[i] = plog.NewLogs()
		in.CopyTo(batches[i])
	}
	require.NoError(t, p.ConsumeLogs(context.Background(), batches[runs])) // warm pools
	values, parsed := 0, 0
	out := batches[runs].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := 0; i < out.Len(); i++ {
		if _, ok := out.At(i).Attributes().Get(attr.KlogFormat); !ok {
			continue // passed through: nothing extracted
		}
		parsed++
		attrs := pcommon.NewValueMap()
		out.At(i).Attributes().CopyTo(attrs.Map())
		values += 1 + countValues(attrs) // body + attributes
	}

	var parser klogline.Parser
	rec := new(klogline.Record)
	parserAllocs := testing.AllocsPerRun(runs, func() {
		for _, l := range lines {
			parser.Parse(l, goldenObserved, rec)
		}
	})

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < runs; i++ {
		require.NoError(t, p.ConsumeLogs(context.Background(), batches[i]))
	}
	runtime.ReadMemStats(&after)
	total := float64(after.Mallocs-before.Mallocs) / runs
	pdataFloor := float64(values + parsed)
	t.Logf("%d records (%d klog), %d extracted values", len(lines), parsed, values)
	t.Logf("parser: %.0f allocations per corpus, %.3f per value", parserAllocs, parserAllocs/float64(values))
	t.Logf("processor: %.1f allocations per batch, %.3f per value; pdata's own floor %.0f (%.3f per value)",
		total, total/float64(values), pdataFloor, pdataFloor/float64(values))
	require.LessOrEqual(t, parserAllocs/float64(values), 1.0)
	require.LessOrEqual(t, (total-pdataFloor)/float64(values), 0.25)
}
