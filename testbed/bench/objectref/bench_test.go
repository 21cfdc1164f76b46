package objectref

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparser"
)

// BenchmarkObjectRefVsKlogParser runs the same klog lines through klog_parser alone and through
// klog_parser -> object_ref, alternating batch by batch so machine load hits both alike. The
// object_ref cost is the difference: it runs on the records exactly as the parser leaves them.
// Each iteration is one 1000-record batch per side. Reported:
//
//	parser_ns/record      klog_parser alone
//	object_ref_ns/record  what object_ref adds
//	object_ref_%          object_ref as a percentage of klog_parser
func BenchmarkObjectRefVsKlogParser(b *testing.B) {
	text, json := klogLines(b)
	for _, tc := range []struct {
		name  string
		lines []string
	}{{"text", text}, {"json", json}} {
		b.Run(tc.name, func(b *testing.B) {
			const times = 100
			records := len(tc.lines) * times
			parser := newProcessor(b, klogparser.NewFactory(), consumertest.NewNop())
			chain := newPipeline(b, consumertest.NewNop())
			ctx := context.Background()
			var parserTime, chainTime time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				one, two := batch(tc.lines, times), batch(tc.lines, times)
				if i%2 == 0 {
					parserTime += timed(b, func() error { return parser.ConsumeLogs(ctx, one) })
					chainTime += timed(b, func() error { return chain.ConsumeLogs(ctx, two) })
				} else {
					chainTime += timed(b, func() error { return chain.ConsumeLogs(ctx, two) })
					parserTime += timed(b, func() error { return parser.ConsumeLogs(ctx, one) })
				}
			}
			n := float64(b.N * records)
			b.ReportMetric(float64(parserTime.Nanoseconds())/n, "parser_ns/record")
			b.ReportMetric(float64((chainTime-parserTime).Nanoseconds())/n, "object_ref_ns/record")
			b.ReportMetric(100*float64(chainTime-parserTime)/float64(parserTime), "object_ref_%")
		})
	}
}

func timed(b *testing.B, f func() error) time.Duration {
	start := time.Now()
	if err := f(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}
