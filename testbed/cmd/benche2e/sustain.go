// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

// sustainedResult is one live run: the node writes at Rate for the run's length while the
// collector (GOMAXPROCS=1) follows; Drain is how long after the node stopped the last line
// arrived, which is the lag at the end of the run. A pipeline keeps up with a rate when its
// drain does not grow with the rate beyond its latency at low rates.
type sustainedResult struct {
	Pipeline   string  `json:"pipeline"`
	Rate       float64 `json:"rate"`
	Lines      int64   `json:"lines"`
	Stored     int64   `json:"stored"`
	Drain      float64 `json:"drainSeconds"`
	CPUSeconds float64 `json:"cpuSeconds"`
}

func sustained(rates string, length time.Duration, dir string, pods int, pipes []pipeline) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	srv, endpoint, err := startServer()
	if err != nil {
		return err
	}
	defer func() { _ = srv.Close() }() // the benchmark's results are already out
	var results []sustainedResult
	for _, f := range strings.Split(rates, ",") {
		rate, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return fmt.Errorf("-sustain: %w", err)
		}
		for _, p := range pipes {
			r, err := sustainOne(p, rate, length, dir, pods, endpoint, srv)
			if err != nil {
				return fmt.Errorf("%s at %.0f lines/s: %w", p.Name, rate, err)
			}
			raw, _ := json.Marshal(r)
			fmt.Println(string(raw))
			results = append(results, r)
		}
	}
	fmt.Printf("\n| lines/s (GOMAXPROCS=1) |")
	for _, p := range pipes {
		fmt.Printf(" %s: drain s (CPU s) after %s of writing |", p.Name, length)
	}
	fmt.Printf("\n|---|")
	for range pipes {
		fmt.Printf("---|")
	}
	for i := 0; i < len(results); i += len(pipes) {
		fmt.Printf("\n| %.0f |", results[i].Rate)
		for _, r := range results[i : i+len(pipes)] {
			missing := ""
			if r.Stored < r.Lines {
				missing = fmt.Sprintf(", %d of %d stored", r.Stored, r.Lines)
			}
			fmt.Printf(" %.1f (%.1f%s) |", r.Drain, r.CPUSeconds, missing)
		}
	}
	fmt.Println()
	return nil
}

func sustainOne(p pipeline, rate float64, length time.Duration, dir string, pods int, endpoint string, srv *localcloudwatch.Server) (sustainedResult, error) {
	srv.Reset()
	run := filepath.Join(dir, fmt.Sprintf("%s-%.0f", p.Name, rate))
	node, state := filepath.Join(run, "node"), filepath.Join(run, "state")
	var err error
	for _, d := range []string{node, state} {
		if err = os.MkdirAll(d, 0o755); err != nil {
			return sustainedResult{}, err
		}
	}
	config := p.Config
	var env []string
	if p.Config == shippedConfig {
		config, env, _, err = shippedRun(run, node, state, endpoint, p, p.Name+"-1")
	} else {
		env, err = fileConfigEnv(node, state, endpoint)
	}
	if err != nil {
		return sustainedResult{}, err
	}
	col, err := harness.StartCollector(p.Bin, config, append(env, "GOMAXPROCS=1"), filepath.Join(run, "collector.log"))
	if err != nil {
		return sustainedResult{}, err
	}
	defer func() { _ = col.Stop(20 * time.Second) }()
	time.Sleep(2 * time.Second) // let it start before the node writes
	sim, err := nodesim.New(nodesim.Config{
		Root: node, Seed: 11, Pods: pods,
		Phases: []nodesim.Phase{{Duration: length, LinesPerSecond: rate}},
		Mix:    nodesim.Mix{KlogText: 2, KlogJSON: 1, Plain: 2, Long: 0.002},
	})
	if err != nil {
		return sustainedResult{}, err
	}
	ledger, err := sim.Run(context.Background())
	if err != nil {
		return sustainedResult{}, err
	}
	stopped := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	stored, _ := harness.WaitStored(ctx, srv, ledger.Lines, col)
	cancel()
	r := sustainedResult{Pipeline: p.Name, Rate: rate, Lines: ledger.Lines, Stored: stored, Drain: time.Since(stopped).Seconds()}
	if cpu, _, err := harness.ProcUsage(col.Pid()); err == nil {
		r.CPUSeconds = cpu.Seconds()
	}
	return r, nil
}
