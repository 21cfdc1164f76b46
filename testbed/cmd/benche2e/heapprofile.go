// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
)

// pprofAddr is where the current run's pprof extension listens (empty: none).
var pprofAddr string

// withPprof adds the pprof extension on a free local port to a collector configuration.
func withPprof(config []byte) ([]byte, string, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(config, &cfg); err != nil {
		return nil, "", err
	}
	addr, err := harness.FreeAddr()
	if err != nil {
		return nil, "", err
	}
	exts, _ := cfg["extensions"].(map[string]any)
	service, _ := cfg["service"].(map[string]any)
	if exts == nil || service == nil {
		return nil, "", errors.New("-heap-profiles: the configuration has no extensions or service section")
	}
	exts["pprof"] = map[string]any{"endpoint": addr}
	list, _ := service["extensions"].([]any)
	service["extensions"] = append(list, "pprof")
	out, err := yaml.Marshal(cfg)
	return out, addr, err
}

// keepHeapProfile samples the process's RssAnon every 250 ms and, whenever it is higher than
// before, writes the heap profile the pprof extension at addr serves to path. The returned
// function stops it.
func keepHeapProfile(pid int, addr, path string) (stop func()) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "bench-e2e: -heap-profiles:", err)
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var best int64
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			m, err := harness.ProcMemory(pid)
			if err != nil || m.Anon <= best {
				continue
			}
			best = m.Anon
			_ = fetchProfile("http://"+addr+"/debug/pprof/heap", path) // best effort: a later sample may still land
		}
	}()
	return func() { close(done); <-finished }
}

// keepCPUProfile takes a CPU profile over length from the pprof extension at addr and writes it
// to path. Failures are reported and otherwise ignored: the profile is a side product.
func keepCPUProfile(addr string, length time.Duration, path string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "bench-e2e: -heap-profiles:", err)
		return
	}
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(length.Seconds()))
	if err := fetchProfile(url, path); err != nil {
		fmt.Fprintln(os.Stderr, "bench-e2e: CPU profile:", err)
	}
}

// fetchProfile writes the profile the pprof extension serves at url to path.
func fetchProfile(url, path string) error {
	resp, err := http.Get(url) //nolint:noctx,gosec // a local profile, bounded by the run (a CPU profile by its own length)
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close() // read in full
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, raw)
	}
	return os.WriteFile(path, raw, 0o644)
}
