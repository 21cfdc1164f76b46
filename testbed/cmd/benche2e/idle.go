// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// idleResult is one idle run: the collector read Files quiet files of one line each, then
// ran for Seconds with nothing to read.
type idleResult struct {
	Pipeline   string  `json:"pipeline"`
	Files      int     `json:"files"`
	Seconds    float64 `json:"seconds"`
	CPUPercent float64 `json:"cpuPercentOfACore"`
	PeakRSSMiB float64 `json:"peakRssMiB"`
	// RSSMiB is the resident set at the end (RssAnon + RssFile + RssShmem): what the idle
	// collector holds then, where PeakRSSMiB is the highest since it started.
	RSSMiB  float64 `json:"rssMiB"`
	AnonMiB float64 `json:"rssAnonMiB"`
	FileMiB float64 `json:"rssFileMiB"`
	// Events and Calls are what the server had accepted at the end: Files events, and the calls
	// that carried them (more events would be lines sent twice).
	Events int64 `json:"events"`
	Calls  int64 `json:"putLogEventsCalls"`
}

// idle writes files container log files of one line each, lets each pipeline read them, and
// then measures its CPU over length with nothing more to read and its memory at the end.
func idle(files int, length time.Duration, dir string, pipes []pipeline) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	corpus := filepath.Join(dir, "quiet")
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for i := range files {
		// Different content per file: file_log tells files apart by their first bytes.
		line := fmt.Sprintf("%s stdout F quiet line of file %d\n", now, i)
		d := filepath.Join(corpus, "var/log/pods", fmt.Sprintf("quiet_pod-%d_%08d-0000-4000-8000-000000000000", i, i), "app")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(d, "0.log"), []byte(line), 0o644); err != nil {
			return err
		}
	}
	srv, endpoint, err := startServer()
	if err != nil {
		return err
	}
	defer func() { _ = srv.Close() }() // the benchmark's results are already out
	fmt.Printf("| pipeline (%d quiet files, %s) | CPU, %% of a core | RSS at the end MiB | peak RSS MiB | RssAnon MiB | RssFile MiB |\n|---|---|---|---|---|---|\n", files, length)
	for _, p := range pipes {
		r, err := idleOne(p, files, length, dir, corpus, endpoint, srv)
		if err != nil {
			return fmt.Errorf("%s idle: %w", p.Name, err)
		}
		raw, _ := json.Marshal(r)
		fmt.Fprintln(os.Stderr, string(raw))
		fmt.Printf("| %s | %.2f | %.0f | %.0f | %.0f | %.0f |\n", r.Pipeline, r.CPUPercent, r.RSSMiB, r.PeakRSSMiB, r.AnonMiB, r.FileMiB)
	}
	return nil
}

func idleOne(p pipeline, files int, length time.Duration, dir, corpus, endpoint string, srv *localcloudwatch.Server) (_ idleResult, err error) {
	srv.Reset()
	run, err := startRun(p, p.Name+"-idle", dir, corpus, endpoint)
	if err != nil {
		return idleResult{}, err
	}
	defer func() { err = errors.Join(err, run.stop()) }()
	deadline := time.Now().Add(2 * time.Minute)
	for srv.Stats().EventsAccepted < int64(files) {
		if exited, werr := run.col.Exited(); exited {
			return idleResult{}, errors.Join(harness.ErrExited, werr)
		}
		if time.Now().After(deadline) {
			return idleResult{}, fmt.Errorf("%d of %d lines stored after 2 minutes", srv.Stats().EventsAccepted, files)
		}
		time.Sleep(100 * time.Millisecond) // polling the server's counter: there is no event to wait on
	}
	// Let batches, checkpoints and the first quiet polls settle before measuring.
	time.Sleep(10 * time.Second)
	cpu0, _, err := harness.ProcUsage(run.col.Pid())
	if err != nil {
		return idleResult{}, err
	}
	if pprofAddr != "" {
		// Profiling: the idle period is also a CPU profile (which costs a little CPU itself).
		keepCPUProfile(pprofAddr, length, filepath.Join(heapProfiles, p.Name+"-idle.cpu.pb.gz"))
	} else {
		time.Sleep(length)
	}
	cpu1, peak, err := harness.ProcUsage(run.col.Pid())
	if err != nil {
		return idleResult{}, err
	}
	m, err := harness.ProcMemory(run.col.Pid())
	if err != nil {
		return idleResult{}, err
	}
	if pprofAddr != "" {
		stop := keepHeapProfile(run.col.Pid(), pprofAddr, filepath.Join(heapProfiles, p.Name+"-idle.heap.pb.gz"))
		time.Sleep(time.Second) // one sample: the first is always the highest so far
		stop()
	}
	st := srv.Stats()
	return idleResult{
		Pipeline: p.Name, Files: files, Seconds: length.Seconds(),
		CPUPercent: 100 * (cpu1 - cpu0).Seconds() / length.Seconds(),
		Events:     st.EventsAccepted, Calls: st.PutLogEventsAccepted,
		PeakRSSMiB: float64(peak) / (1 << 20), RSSMiB: float64(m.Total()) / (1 << 20), AnonMiB: float64(m.Anon) / (1 << 20), FileMiB: float64(m.File) / (1 << 20),
	}, nil
}
