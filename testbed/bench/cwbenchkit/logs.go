// SPDX-License-Identifier: Apache-2.0

package cwbenchkit

import (
	"context"
	"os"
	"runtime/pprof"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// Logs builds the pdata input of every ConsumeLogs call. The module asks for the oldest pdata
// either benchmark uses, so each program builds it with its own collector release.
func Logs(chunks [][]Source) []plog.Logs {
	out := make([]plog.Logs, 0, len(chunks))
	for _, c := range chunks {
		ld := plog.NewLogs()
		for _, src := range c {
			rl := ld.ResourceLogs().AppendEmpty()
			for k, v := range src.Resource {
				rl.Resource().Attributes().PutStr(k, v)
			}
			lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
			for _, r := range src.Records {
				lr := lrs.AppendEmpty()
				lr.SetTimestamp(pcommon.NewTimestampFromTime(r.Timestamp))
				lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(r.Timestamp))
				lr.SetSeverityNumber(plog.SeverityNumberInfo)
				lr.Body().SetStr(r.Body)
				lr.Attributes().PutStr("log.iostream", "stdout")
			}
		}
		out = append(out, ld)
	}
	return out
}

// LogsExporter is the part of an exporter the benchmark drives.
type LogsExporter interface {
	ConsumeLogs(context.Context, plog.Logs) error
	Shutdown(context.Context) error
}

// Measure empties the server, then, measuring CPU and wall time, creates and starts an
// exporter with start, sends every chunk, shuts it down (draining its queue), waits for the
// server to hold every event and returns the result. cpuProfile, when set, receives a CPU
// profile of the measured part.
func Measure(name, endpoint string, chunks []plog.Logs, cpuProfile string, start func() (LogsExporter, error)) (Result, error) {
	if err := Reset(endpoint); err != nil {
		return Result{}, err
	}
	want := 0
	for _, ld := range chunks {
		want += ld.LogRecordCount()
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return Result{}, err
		}
		defer func() { _ = f.Close() }() // a diagnostic profile: a failed close does not change the result
		if err := pprof.StartCPUProfile(f); err != nil {
			return Result{}, err
		}
		defer pprof.StopCPUProfile()
	}
	ctx := context.Background()
	cpu0, wall0 := CPUSeconds(), time.Now()
	exp, err := start()
	if err != nil {
		return Result{}, err
	}
	for _, ld := range chunks {
		if err := exp.ConsumeLogs(ctx, ld); err != nil {
			return Result{}, err
		}
	}
	if err := exp.Shutdown(ctx); err != nil {
		return Result{}, err
	}
	cpu, wall := CPUSeconds()-cpu0, time.Since(wall0).Seconds()
	st, err := WaitAccepted(endpoint, int64(want), 10*time.Second)
	if err != nil {
		return Result{}, err
	}
	return NewResult(name, cpu, wall, st), nil
}
