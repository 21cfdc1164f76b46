// SPDX-License-Identifier: Apache-2.0

package objectref

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor"
)

// TestAllocationsPerRecord compares allocations, which machine load does not disturb: klog_parser
// alone against klog_parser -> object_ref on the lines of every call. object_ref's allocations are
// pdata's price for the attributes it adds or rewrites (a value wrapper each, a larger attribute
// array when the record has no room left, the joined "namespace/name" string of a map rewritten
// as text, and the map built from JSON text).
func TestAllocationsPerRecord(t *testing.T) {
	for _, tc := range recordMixes(t) {
		t.Run(tc.name, func(t *testing.T) {
			parser := newProcessor(t, klogparserprocessor.NewFactory(), consumertest.NewNop())
			chain := newPipeline(t, consumertest.NewNop())
			parserAllocs := allocsPerRecord(t, tc.lines, parser.ConsumeLogs)
			chainAllocs := allocsPerRecord(t, tc.lines, chain.ConsumeLogs)
			objectRef := chainAllocs - parserAllocs
			floorParser := newProcessor(t, klogparserprocessor.NewFactory(), pdataFloor(editsOf(t, tc.lines)))
			floor := allocsPerRecord(t, tc.lines, floorParser.ConsumeLogs) - parserAllocs
			t.Logf("%s: allocations per record: klog_parser %.2f, object_ref %.2f (%.0f%% of klog_parser), its pdata writes alone %.2f", tc.name,
				parserAllocs, objectRef, 100*objectRef/parserAllocs, floor)
			// What object_ref allocates beyond the pdata writes its output consists of (a value
			// wrapper per attribute): the canonical strings and object keys it builds, at most one
			// and a half per record.
			if objectRef > floor+1.5 {
				t.Errorf("object_ref allocates %.2f per record, %.2f more than its pdata writes", objectRef, objectRef-floor)
			}
		})
	}
}

// allocsPerRecord measures consume's allocations on fresh batches of lines, made beforehand.
func allocsPerRecord(t *testing.T, lines []string, consume func(context.Context, plog.Logs) error) float64 {
	const runs, times = 20, 10
	batches := make([]plog.Logs, runs+1) // AllocsPerRun calls once more to warm up
	for i := range batches {
		batches[i] = batch(lines, times)
	}
	next := 0
	allocs := testing.AllocsPerRun(runs, func() {
		if err := consume(context.Background(), batches[next]); err != nil {
			t.Fatal(err)
		}
		next++
	})
	return allocs / float64(len(lines)*times)
}
