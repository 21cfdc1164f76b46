// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

// TestShippedTelemetry runs the node with the shipped configuration's own metrics on (the
// Prometheus reader moved to a free port, the shipped level kept) and checks, once every line
// is stored, that each of the pipeline's components counted what the node wrote: cri_log every
// physical line and every joined record, klog_parser and object_ref every record, and
// cloudwatch_groups every event CloudWatch Logs accepted.
func TestShippedTelemetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 12})
	e.metricsAddr = freeAddr(t)
	n := steadyNode()
	n.Seed = 12
	n.Phases = []nodesim.Phase{{Duration: 8 * time.Second, LinesPerSecond: 500}}
	run(t, e, scenario{node: n, delivered: func(e *env, ledger nodesim.Ledger) {
		if ledger.FileLines <= ledger.Lines {
			t.Fatalf("the node wrote no partial lines (%d file lines for %d lines): the join counts are not tested", ledger.FileLines, ledger.Lines)
		}
		got := scrape(t, "http://"+e.metricsAddr+"/metrics")
		sum := func(names ...string) float64 {
			var s float64
			for _, name := range names {
				v, ok := got[name]
				if !ok {
					t.Errorf("no metric %s", name)
				}
				s += v
			}
			return s
		}
		lines, records := float64(ledger.FileLines), float64(ledger.Lines)
		for _, c := range []struct {
			what string
			got  float64
			want float64
		}{
			{"cri_log: physical lines read", sum("otelcol_receiver_cri_log_lines_read"), lines},
			{"cri_log: records after joining", sum("otelcol_receiver_cri_log_records_emitted"), records},
			{"klog_parser: records parsed or passed through", sum("otelcol_processor_klog_parser_records_parsed", "otelcol_processor_klog_parser_records_not_klog"), records},
			{"object_ref: records received", sum("otelcol_processor_object_ref_records_processed"), records},
			{"cloudwatch_groups: events accepted", sum("otelcol_exporter_cloudwatch_groups_events_sent"), records},
		} {
			if c.got != c.want {
				t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
			}
		}
		// The exporter's persistent queue is in queue_storage: every event went through it, so
		// its own metrics count bytes written and read back, and the drained queue left
		// nothing live.
		for _, name := range []string{"otelcol_extension_queue_storage_bytes_written", "otelcol_extension_queue_storage_bytes_read"} {
			if v, ok := got[name]; !ok || v <= 0 {
				t.Errorf("%s = %v (served: %v), want > 0", name, v, ok)
			}
		}
		if v, ok := got["otelcol_extension_queue_storage_segments"]; !ok || v <= 0 {
			t.Errorf("otelcol_extension_queue_storage_segments = %v (served: %v), want > 0", v, ok)
		}
		if t.Failed() {
			t.Logf("metrics served: %v", got)
		}
	}})
}

// scrape reads a Prometheus text exposition and returns each metric's value summed over its
// series (labels dropped); a failed read fails the test.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	out, err := fetchMetrics(url)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fetchMetrics is scrape returning its error, for callers that go on without the metrics.
func fetchMetrics(url string) (map[string]float64, error) {
	resp, err := http.Get(url) //nolint:noctx // the test's own loopback address, read once
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	out, err := parseMetrics(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	return out, nil
}

// parseMetrics reads a Prometheus text exposition into each metric's value summed over its
// series.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", line, err)
		}
		out[name] += v
	}
	return out, sc.Err()
}
