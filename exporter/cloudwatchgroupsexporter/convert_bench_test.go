// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// BenchmarkConvert measures the exporter's encoding path (route and encode, before the queue)
// on one cri_log turn of the Fluent Bit corpus (criCorpusLogs, 1,000 records) in the shipped
// json format. Bytes per op are the records' body bytes. The arena's chunks are not given
// back, as while a memory queue fills.
func BenchmarkConvert(b *testing.B) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Region = "us-east-1"
	cfg.Hostname = "node-1"
	cfg.GroupBy = GroupByNamespaceName
	e, err := newExporter(cfg, exportertest.NewNopSettings(metadata.Type))
	require.NoError(b, err)
	ld := criCorpusLogs(1000)
	body := 0
	lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := range lrs.Len() {
		body += len(lrs.At(i).Body().Str())
	}
	ctx := context.Background()
	b.SetBytes(int64(body))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		req, _ := e.convert(ctx, ld)
		e.partials.release(req.(*eventsRequest))
	}
}
