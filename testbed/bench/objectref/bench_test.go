// SPDX-License-Identifier: Apache-2.0

//go:build linux

package objectref

import (
	"context"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"golang.org/x/sys/unix"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor"
)

// BenchmarkObjectRefVsKlogParser runs the same klog lines through klog_parser alone and through
// klog_parser -> object_ref, alternating batch by batch so machine load hits both alike. The
// object_ref cost is the difference: it runs on the records exactly as the parser leaves them.
// Each iteration is one batch of about 1000 records per side.
//
// Two record mixes per format: "text"/"json" log every call in lines_test.go once (8 of 10
// carry references: the worst case); the "volume-mix" ones weigh them like a control plane's
// log volume, where the apiserver access log dominates (the structured logging KEP measured
// over 96% of master-node lines from httplog and get.go, which carry no object reference):
// 90% access-log lines, 10% the other calls. Reported:
//
//	parser_ns/record      klog_parser alone, wall time
//	object_ref_ns/record  what object_ref adds, wall time
//	object_ref_%          object_ref as a percentage of klog_parser, wall time
//	object_ref_cpu_%      the same from the benchmark thread's CPU time, which time spent
//	                      descheduled on a busy machine does not inflate (GC assists are
//	                      charged to the thread that allocates; background GC is not counted)
func BenchmarkObjectRefVsKlogParser(b *testing.B) {
	for _, tc := range recordMixes(b) {
		b.Run(tc.name, func(b *testing.B) {
			alternate(b, tc.lines, newPipeline(b, consumertest.NewNop()))
		})
	}
}

// recordMix is a named list of klog lines.
type recordMix struct {
	name  string
	lines []string
}

// recordMixes returns the record mixes the benchmarks use: every call once, in each format,
// and the volume-weighted mixes.
func recordMixes(tb testing.TB) []recordMix {
	text, json := klogLines(tb)
	return []recordMix{
		{"text", text},
		{"json", json},
		{"text-volume-mix", volumeMixOf(tb, text)},
		{"json-volume-mix", volumeMixOf(tb, json)},
		{"node-mix", nodeMixLines(tb)},
		{"app-only", appLines},
	}
}

// alternate runs batches of lines through klog_parser alone and through chain (klog_parser
// followed by what is measured), alternating which goes first, and reports the metrics listed
// at BenchmarkObjectRefVsKlogParser.
func alternate(b *testing.B, lines []string, chain consumer.Logs) {
	times := 1000 / len(lines)
	records := len(lines) * times
	parser := newProcessor(b, klogparserprocessor.NewFactory(), consumertest.NewNop())
	ctx := context.Background()
	var parserTime, chainTime, parserCPU, chainCPU time.Duration
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		one, two := batch(lines, times), batch(lines, times)
		runParser := func() { timed(b, &parserTime, &parserCPU, func() error { return parser.ConsumeLogs(ctx, one) }) }
		runChain := func() { timed(b, &chainTime, &chainCPU, func() error { return chain.ConsumeLogs(ctx, two) }) }
		if i%2 == 0 {
			runParser()
			runChain()
		} else {
			runChain()
			runParser()
		}
	}
	n := float64(b.N * records)
	b.ReportMetric(float64(parserTime.Nanoseconds())/n, "parser_ns/record")
	b.ReportMetric(float64((chainTime-parserTime).Nanoseconds())/n, "object_ref_ns/record")
	b.ReportMetric(100*float64(chainTime-parserTime)/float64(parserTime), "object_ref_%")
	b.ReportMetric(100*float64(chainCPU-parserCPU)/float64(parserCPU), "object_ref_cpu_%")
}

// timed runs f, adding its wall time to wall and the calling thread's CPU time to cpu.
func timed(b *testing.B, wall, cpu *time.Duration, f func() error) {
	startCPU := threadCPU(b)
	start := time.Now()
	if err := f(); err != nil {
		b.Fatal(err)
	}
	*wall += time.Since(start)
	*cpu += threadCPU(b) - startCPU
}

// threadCPU returns the CPU time the calling OS thread has used.
func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}
