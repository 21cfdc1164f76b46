// SPDX-License-Identifier: Apache-2.0

package objectref

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor"
)

// edit is what object_ref changes in the record of one line: attributes whose value it
// rewrites, and attributes it adds (always strings).
type edit struct {
	set []setValue
	add []addString
	// addOther are added values that are not strings (otelcol_k8s.object.refs).
	addOther []setValue
}

type setValue struct {
	key string
	val pcommon.Value
}

type addString struct{ key, val string }

// editsOf runs each line through klog_parser alone and through klog_parser -> object_ref and
// returns, per line, what object_ref changed.
func editsOf(tb testing.TB, lines []string) []edit {
	tb.Helper()
	parsed, chained := new(consumertest.LogsSink), new(consumertest.LogsSink)
	parser := newProcessor(tb, klogparserprocessor.NewFactory(), parsed)
	chain := newPipeline(tb, chained)
	edits := make([]edit, len(lines))
	for i, l := range lines {
		parsed.Reset()
		chained.Reset()
		require.NoError(tb, parser.ConsumeLogs(context.Background(), batch([]string{l}, 1)))
		require.NoError(tb, chain.ConsumeLogs(context.Background(), batch([]string{l}, 1)))
		before := firstRecord(parsed).Attributes()
		for k, v := range firstRecord(chained).Attributes().All() {
			old, ok := before.Get(k)
			switch {
			case !ok && v.Type() == pcommon.ValueTypeStr:
				edits[i].add = append(edits[i].add, addString{k, v.Str()})
			case !ok:
				val := pcommon.NewValueEmpty()
				v.CopyTo(val)
				edits[i].addOther = append(edits[i].addOther, setValue{k, val})
			case !old.Equal(v):
				val := pcommon.NewValueEmpty()
				v.CopyTo(val)
				edits[i].set = append(edits[i].set, setValue{k, val})
			}
		}
	}
	return edits
}

func firstRecord(s *consumertest.LogsSink) plog.LogRecord {
	return s.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
}

// pdataFloor returns a consumer that makes object_ref's changes to records made by batch from
// the lines edits came from, knowing them in advance: only the pdata writes, with no key lookup,
// parsing or checking, and no string to build. What object_ref costs beyond this is its own work.
func pdataFloor(edits []edit) consumer.Logs {
	next, _ := consumer.NewLogs(func(_ context.Context, ld plog.Logs) error {
		lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for r := 0; r < lrs.Len(); r++ {
			e := &edits[r%len(edits)]
			attrs := lrs.At(r).Attributes()
			for _, s := range e.set {
				v, _ := attrs.Get(s.key)
				if s.val.Type() == pcommon.ValueTypeStr {
					v.SetStr(s.val.Str())
				} else {
					s.val.CopyTo(v)
				}
			}
			if len(e.add)+len(e.addOther) > 0 {
				attrs.EnsureCapacity(attrs.Len() + len(e.add) + len(e.addOther))
				for _, a := range e.add {
					attrs.PutStr(a.key, a.val)
				}
				for _, a := range e.addOther {
					a.val.CopyTo(attrs.PutEmpty(a.key))
				}
			}
		}
		return nil
	})
	return next
}

// TestPdataFloorMatchesObjectRef checks that the floor benchmark's consumer writes what
// object_ref writes, on every record mix the benchmarks use.
func TestPdataFloorMatchesObjectRef(t *testing.T) {
	for _, tc := range recordMixes(t) {
		lines := tc.lines
		t.Run(tc.name, func(t *testing.T) {
			edits := editsOf(t, lines)
			changed := 0
			for _, e := range edits {
				changed += len(e.set) + len(e.add) + len(e.addOther)
			}
			if tc.name == "app-only" {
				assert.Zero(t, changed, "object_ref leaves application lines alone")
			} else {
				assert.Positive(t, changed, "object_ref changes some records")
			}
			want, got := new(consumertest.LogsSink), new(consumertest.LogsSink)
			require.NoError(t, newPipeline(t, want).ConsumeLogs(context.Background(), batch(lines, 3)))
			floor := newProcessor(t, klogparserprocessor.NewFactory(), pdataFloor(edits))
			ld := batch(lines, 3)
			require.NoError(t, floor.ConsumeLogs(context.Background(), ld))
			require.NoError(t, got.ConsumeLogs(context.Background(), ld))
			wantRecs := want.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
			gotRecs := got.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
			require.Equal(t, wantRecs.Len(), gotRecs.Len())
			for i := 0; i < wantRecs.Len(); i++ {
				assert.Equal(t, wantRecs.At(i).Attributes().AsRaw(), gotRecs.At(i).Attributes().AsRaw(), "record %d", i)
			}
		})
	}
}

// BenchmarkPdataFloorVsKlogParser is BenchmarkObjectRefVsKlogParser with object_ref replaced by
// pdataFloor: the part of object_ref's cost that is the pdata writes its output needs (a value
// wrapper per new or rewritten string, a larger attribute array when the record has no room),
// which no implementation of object_ref on pdata v1.66's API avoids. Its metrics keep the
// object_ref_* names so one script reads both; here they mean the floor.
func BenchmarkPdataFloorVsKlogParser(b *testing.B) {
	for _, tc := range recordMixes(b) {
		b.Run(tc.name, func(b *testing.B) {
			floor := newProcessor(b, klogparserprocessor.NewFactory(), pdataFloor(editsOf(b, tc.lines)))
			alternate(b, tc.lines, floor)
		})
	}
}
