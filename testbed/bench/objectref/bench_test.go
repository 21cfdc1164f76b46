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
// Each iteration is one batch of about 1000 records per side.
//
// Two record mixes per format: "all calls" logs every call in lines_test.go once (8 of 10 carry
// references: the worst case), "volume mix" weighs them like a control plane's log volume,
// where the apiserver access log dominates (the structured logging KEP measured over 96% of
// master-node lines from httplog and get.go, which carry no object reference): 90% access-log
// lines, 10% the other calls. Reported:
//
//	parser_ns/record      klog_parser alone
//	object_ref_ns/record  what object_ref adds
//	object_ref_%          object_ref as a percentage of klog_parser
func BenchmarkObjectRefVsKlogParser(b *testing.B) {
	text, json := klogLines(b)
	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"text", text}, {"json", json},
		{"text-volume-mix", volumeMix(b, text)}, {"json-volume-mix", volumeMix(b, json)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			times := 1000 / len(tc.lines)
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

// volumeMix returns the lines of every call but the access log once, and the access log line
// nine times as often as all of them together.
func volumeMix(b *testing.B, lines []string) []string {
	var mix []string
	access := -1
	for i, c := range calls {
		if c.name == "apiserver access log" {
			access = i
			continue
		}
		mix = append(mix, lines[i])
	}
	if access < 0 {
		b.Fatal("no access log call")
	}
	for n := 9 * len(mix); n > 0; n-- {
		mix = append(mix, lines[access])
	}
	return mix
}
