// SPDX-License-Identifier: Apache-2.0

package klogparser

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/transformprocessor"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor"
)

// corpusGlob is the real-world-shaped klog corpus kept with the processor's golden tests.
const corpusGlob = "../../../processor/klogparserprocessor/testdata/golden/*.log"

var observed = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// corpus returns the records of the golden inputs; a line starting with a tab or " >"
// continues the previous record (klog's multi-line values).
func corpus(tb testing.TB) []string {
	files, err := filepath.Glob(corpusGlob)
	require.NoError(tb, err)
	require.NotEmpty(tb, files)
	var recs []string
	for _, name := range files {
		f, err := os.Open(name)
		require.NoError(tb, err)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if len(recs) > 0 && (strings.HasPrefix(line, "\t") || strings.HasPrefix(line, " >")) {
				recs[len(recs)-1] += "\n" + line
				continue
			}
			recs = append(recs, line)
		}
		require.NoError(tb, f.Close())
	}
	return recs
}

func batch(lines []string) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, l := range lines {
		lr := lrs.AppendEmpty()
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(observed))
		lr.Body().SetStr(l)
	}
	return ld
}

// transformStatements do with OTTL what klog_parser does: the text header by ExtractPatterns,
// severity, time, thread, file and line, the quoted message, the key/value pairs by
// ParseKeyValue; the JSON format by ParseJSON with msg, ts, caller, v and err moved to their
// places. The year cannot be inferred in OTTL and is fixed, which only favors upstream.
var transformStatements = []any{
	// Text format.
	`merge_maps(cache, ExtractPatterns(body, "^(?P<sev>[IWEF])(?P<md>\\d{4}) (?P<clock>\\d{2}:\\d{2}:\\d{2}\\.\\d{6})\\s+(?P<tid>\\d+) (?P<file>[^ :\\]]+):(?P<line>\\d+)\\] (?P<rest>(?s).*)$"), "upsert") where IsString(body) and IsMatch(body, "^[IWEF]\\d{4} ")`,
	`set(severity_number, SEVERITY_NUMBER_INFO) where cache["sev"] == "I"`,
	`set(severity_number, SEVERITY_NUMBER_WARN) where cache["sev"] == "W"`,
	`set(severity_number, SEVERITY_NUMBER_ERROR) where cache["sev"] == "E"`,
	`set(severity_number, SEVERITY_NUMBER_FATAL) where cache["sev"] == "F"`,
	`set(severity_text, "INFO") where cache["sev"] == "I"`,
	`set(severity_text, "WARNING") where cache["sev"] == "W"`,
	`set(severity_text, "ERROR") where cache["sev"] == "E"`,
	`set(severity_text, "FATAL") where cache["sev"] == "F"`,
	`set(time, Time(Concat(["2026", cache["md"], " ", cache["clock"]], ""), "%Y%m%d %H:%M:%S.%f")) where cache["md"] != nil`,
	`set(attributes["thread.id"], Int(cache["tid"])) where cache["tid"] != nil`,
	`set(attributes["code.file.path"], cache["file"]) where cache["file"] != nil`,
	`set(attributes["code.line.number"], Int(cache["line"])) where cache["line"] != nil`,
	`merge_maps(cache, ExtractPatterns(cache["rest"], "^\"(?P<msg>(?:[^\"\\\\]|\\\\.)*)\"(?: (?P<kv>(?s).+))?$"), "upsert") where cache["rest"] != nil`,
	`set(body, cache["rest"]) where cache["rest"] != nil and cache["msg"] == nil`,
	`set(body, cache["msg"]) where cache["msg"] != nil`,
	`merge_maps(attributes, ParseKeyValue(cache["kv"], "=", " "), "upsert") where cache["kv"] != nil`,
	`set(attributes["exception.message"], attributes["err"]) where attributes["err"] != nil`,
	`delete_key(attributes, "err")`,
	// JSON format.
	`merge_maps(cache, ParseJSON(body), "upsert") where IsString(body) and IsMatch(body, "^\\{")`,
	`set(cache["klog_json"], true) where cache["ts"] != nil and cache["msg"] != nil`,
	`set(body, cache["msg"]) where cache["klog_json"] == true`,
	`set(time_unix_nano, Int(cache["ts"] * 1000000)) where cache["klog_json"] == true`,
	`set(severity_number, SEVERITY_NUMBER_INFO) where cache["klog_json"] == true and cache["v"] != nil`,
	`set(severity_text, "INFO") where cache["klog_json"] == true and cache["v"] != nil`,
	`set(severity_number, SEVERITY_NUMBER_ERROR) where cache["klog_json"] == true and cache["v"] == nil`,
	`set(severity_text, "ERROR") where cache["klog_json"] == true and cache["v"] == nil`,
	`merge_maps(cache, ExtractPatterns(cache["caller"], "^(?P<cfile>.*):(?P<cline>\\d+)$"), "upsert") where cache["klog_json"] == true and cache["caller"] != nil`,
	`merge_maps(attributes, cache, "upsert") where cache["klog_json"] == true`,
	`delete_matching_keys(attributes, "^(ts|msg|v|err|caller|level|cfile|cline|klog_json)$") where cache["klog_json"] == true`,
	`set(attributes["code.file.path"], cache["cfile"]) where cache["cfile"] != nil`,
	`set(attributes["code.line.number"], Int(cache["cline"])) where cache["cline"] != nil`,
	`set(attributes["otelcol_k8s.klog.verbosity"], cache["v"]) where cache["klog_json"] == true and cache["v"] != nil`,
	`set(attributes["exception.message"], cache["err"]) where cache["klog_json"] == true and cache["err"] != nil`,
}

func newTransform(tb testing.TB, next consumer.Logs) processor.Logs {
	f := transformprocessor.NewFactory()
	cfg := f.CreateDefaultConfig()
	conf := confmap.NewFromStringMap(map[string]any{
		"error_mode": "ignore",
		"log_statements": []any{map[string]any{
			"context":    "log",
			"statements": transformStatements,
		}},
	})
	require.NoError(tb, conf.Unmarshal(cfg))
	require.NoError(tb, cfg.(interface{ Validate() error }).Validate())
	p, err := f.CreateLogs(context.Background(), processortest.NewNopSettings(f.Type()), cfg, next)
	require.NoError(tb, err)
	require.NoError(tb, p.Start(context.Background(), nil))
	return p
}

func newKlogParser(tb testing.TB, next consumer.Logs) processor.Logs {
	f := klogparserprocessor.NewFactory()
	p, err := f.CreateLogs(context.Background(), processortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), next)
	require.NoError(tb, err)
	require.NoError(tb, p.Start(context.Background(), nil))
	return p
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run feeds b.N copies of the corpus batch through p. Copies are made with the timer and the
// CPU clock stopped, so records/cpu-s counts only the processor (and the GC work it causes).
func run(b *testing.B, p processor.Logs) {
	lines := corpus(b)
	in := batch(lines)
	const pool = 32
	bufs := make([]plog.Logs, pool)
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		b.StopTimer()
		n := min(pool, b.N-done)
		for i := range n {
			bufs[i] = plog.NewLogs()
			in.CopyTo(bufs[i])
		}
		b.StartTimer()
		start := cpuTime()
		for i := range n {
			if err := p.ConsumeLogs(context.Background(), bufs[i]); err != nil {
				b.Fatal(err)
			}
		}
		cpu += cpuTime() - start
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*len(lines))/cpu.Seconds(), "records/cpu-s")
	b.ReportMetric(float64(len(lines)), "records/op")
	require.NoError(b, p.Shutdown(context.Background()))
}

func BenchmarkKlogParser(b *testing.B) { run(b, newKlogParser(b, consumertest.NewNop())) }

func BenchmarkTransformOTTL(b *testing.B) { run(b, newTransform(b, consumertest.NewNop())) }
