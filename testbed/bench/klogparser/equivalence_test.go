// SPDX-License-Identifier: Apache-2.0

package klogparser

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
)

func output(t *testing.T, build func(testing.TB, *consumertest.LogsSink) processor.Logs) plog.LogRecordSlice {
	t.Helper()
	sink := new(consumertest.LogsSink)
	p := build(t, sink)
	require.NoError(t, p.ConsumeLogs(context.Background(), batch(corpus(t))))
	require.NoError(t, p.Shutdown(context.Background()))
	return sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
}

// TestSameJob checks that the OTTL configuration really does the job the benchmark compares:
// on the corpus it must agree with klog_parser on body, severity, time (to the millisecond),
// source location and attribute keys for most records. The differences left are upstream's
// limits (untyped values, unprocessed escapes, no multi-line values, short fractions,
// truncated lines), logged for the record.
func TestSameJob(t *testing.T) {
	ours := output(t, func(tb testing.TB, s *consumertest.LogsSink) processor.Logs { return newKlogParser(tb, s) })
	theirs := output(t, func(tb testing.TB, s *consumertest.LogsSink) processor.Logs { return newTransform(tb, s) })
	require.Equal(t, ours.Len(), theirs.Len())
	agree := 0
	for i := 0; i < ours.Len(); i++ {
		a, b := ours.At(i), theirs.At(i)
		aa, ba := a.Attributes(), b.Attributes()
		aa.Remove("otelcol_k8s.klog.format")
		same := a.Body().AsString() == b.Body().AsString() &&
			a.SeverityNumber() == b.SeverityNumber() &&
			a.Timestamp().AsTime().UnixMilli() == b.Timestamp().AsTime().UnixMilli() &&
			aa.Len() == ba.Len()
		for k, v := range aa.All() {
			w, ok := ba.Get(k)
			if !ok || (k == "code.file.path" || k == "code.line.number") && v.AsRaw() != w.AsRaw() {
				same = false
			}
		}
		if same {
			agree++
		} else {
			t.Logf("record %d differs:\n ours:     %q %v\n upstream: %q %v", i, a.Body().AsString(), aa.AsRaw(), b.Body().AsString(), ba.AsRaw())
		}
	}
	t.Logf("%d of %d records agree", agree, ours.Len())
	require.GreaterOrEqual(t, agree*100/ours.Len(), 80, "the OTTL configuration must do the same job")
}
