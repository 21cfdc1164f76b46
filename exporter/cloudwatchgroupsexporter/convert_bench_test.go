// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// BenchmarkConvert measures the exporter's encoding path (route and encode, before the queue)
// on a batch shaped like one cri_log turn of the Fluent Bit corpus (testbed/BENCHMARKS.md): one
// file's resource, 1,000 records of plain text of about 150 bytes with a stream attribute, the
// shipped json format. Bytes per op are the records' body bytes.
func BenchmarkConvert(b *testing.B) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Region = "us-east-1"
	cfg.Hostname = "node-1"
	cfg.GroupBy = GroupByNamespaceName
	e, err := newExporter(cfg, exportertest.NewNopSettings(metadata.Type))
	require.NoError(b, err)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	a := rl.Resource().Attributes()
	a.PutStr("k8s.namespace.name", "ns-07")
	a.PutStr("k8s.pod.name", "app-7d9c5b6f4-x2k8q")
	a.PutStr("k8s.pod.uid", "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0")
	a.PutStr("k8s.container.name", "app")
	a.PutStr("k8s.container.restart_count", "0")
	a.PutStr("log.file.path", "/var/log/pods/ns-07_app-7d9c5b6f4-x2k8q_0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0/app/0.log")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	now := time.Now()
	body := 0
	for i := range 1000 {
		r := lrs.AppendEmpty()
		r.SetTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Duration(i) * time.Millisecond)))
		r.SetObservedTimestamp(pcommon.NewTimestampFromTime(now))
		text := fmt.Sprintf("%s request %d handled path=/api/v1/items/%d status=200 took=%dms %s", now.Format(time.RFC3339), i, i*7, i%97, strings.Repeat("a", 60))
		r.Body().SetStr(text)
		r.Attributes().PutStr("log.iostream", "stdout")
		body += len(text)
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
