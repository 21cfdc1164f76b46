// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// criCorpusLogs is one container log file's batch as cri_log hands it over for the Fluent Bit
// benchmark's corpus (testbed/cmd/benche2e): the path's resource attributes, one plain text
// entry per record.
func criCorpusLogs(n int) plog.Logs {
	words := []string{"GET", "POST", "/api/v1/orders", "/healthz", "cache", "miss", "hit", "user", "session", "retry", "upstream", "timeout"}
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	res := rl.Resource().Attributes()
	res.PutStr("k8s.namespace.name", "ns7")
	res.PutStr("k8s.pod.name", "pod-7")
	res.PutStr("k8s.pod.uid", "00000007-0000-4000-8000-000000000000")
	res.PutStr("k8s.container.name", "app")
	res.PutInt("k8s.container.restart_count", 0)
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	start := time.Now().Add(-time.Second)
	for i := range n {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Microsecond)))
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(start))
		lr.Body().SetStr(fmt.Sprintf("level=info msg=%q method=%s path=%s status=%d bytes=%d duration_ms=%d request_id=%08x",
			words[i%len(words)]+" "+words[(i/7)%len(words)]+" "+words[(i/13)%len(words)],
			words[i%2], words[2+i%2], 200+i%5, i%9973, i%311, 200*i+7))
		lr.Attributes().PutStr("log.iostream", []string{"stdout", "stdout", "stderr"}[i%3])
	}
	return ld
}

// BenchmarkQueueItemCompression compresses the messages of a queue item (the shipped json
// format, the benchmark corpus's records) in frames of queueChunk bytes, as marshalRequest
// does, with S2 (what the queue uses), S2's better mode and zstd, and reports the stored bytes
// per message byte. Fewer stored bytes save the persistent queue's writes (about 20 ms of CPU
// per stored MiB, BenchmarkQueueStorageWrites); the encoding's own CPU per message byte is
// what it costs (testbed/BENCHMARKS.md, "The node agent against Fluent Bit").
func BenchmarkQueueItemCompression(b *testing.B) {
	cfg := createDefaultConfig().(*Config)
	cfg.Region = "us-east-1"
	e, err := newExporter(cfg, exportertest.NewNopSettings(metadata.Type))
	require.NoError(b, err)
	r, err := e.convert(context.Background(), criCorpusLogs(5000))
	require.NoError(b, err)
	var msgs []byte
	for _, s := range r.(*eventsRequest).streams {
		for _, ev := range s.events {
			msgs = append(msgs, ev.Message...)
		}
	}
	zfast, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	require.NoError(b, err)
	for _, c := range []struct {
		name string
		enc  func(dst, src []byte) []byte
	}{
		{"s2", s2.Encode},
		{"s2-better", s2.EncodeBetter},
		{"zstd-fastest", func(dst, src []byte) []byte { return zfast.EncodeAll(src, dst[:0]) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			dst := make([]byte, s2.MaxEncodedLen(queueChunk))
			b.SetBytes(int64(len(msgs)))
			stored := 0
			for b.Loop() {
				stored = 0
				for o := 0; o < len(msgs); o += queueChunk {
					stored += len(c.enc(dst, msgs[o:min(o+queueChunk, len(msgs))]))
				}
			}
			b.ReportMetric(float64(stored)/float64(len(msgs)), "stored/message")
		})
	}
}
