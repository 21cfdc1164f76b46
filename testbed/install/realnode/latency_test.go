// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"bufio"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// arrivals is when the lines of a scenario were written and stored, read from the stored
// events themselves: an event's timestamp is the container runtime's time of the line, its
// ingestion time the local server's time of the PutLogEvents call that stored it, both from the
// host's clock. It measures the product's delay without the test's own polling.
type arrivals struct {
	began                 time.Time
	lastWrite, lastStored time.Time
	delays                []time.Duration // per stored line, sorted
	written, stored       []int           // lines per second since began
}

// arrivalsOf collects the arrivals of the workloads' numbered lines.
func arrivalsOf(t *testing.T, e *env, ws []loggen, began time.Time) arrivals {
	t.Helper()
	ids := map[string]bool{}
	for _, w := range ws {
		ids[w.name] = true
	}
	a := arrivals{began: began}
	bucket := func(curve *[]int, at time.Time) {
		i := max(0, int(at.Sub(began)/time.Second))
		for len(*curve) <= i {
			*curve = append(*curve, 0)
		}
		(*curve)[i]++
	}
	for _, ev := range mustStored(t, e) {
		l, ok := parseLoggen(ev.Message)
		if !ok || l.end || !ids[l.id] {
			continue
		}
		wrote, stored := time.UnixMilli(ev.Timestamp), time.UnixMilli(ev.IngestionTime)
		a.delays = append(a.delays, stored.Sub(wrote))
		if wrote.After(a.lastWrite) {
			a.lastWrite = wrote
		}
		if stored.After(a.lastStored) {
			a.lastStored = stored
		}
		bucket(&a.written, wrote)
		bucket(&a.stored, stored)
	}
	slices.Sort(a.delays)
	return a
}

// afterLastWrite is how long after the last line was written the last line was stored.
func (a arrivals) afterLastWrite() time.Duration { return a.lastStored.Sub(a.lastWrite) }

// quantile of the per-line delays (q in [0, 1]).
func (a arrivals) quantile(q float64) time.Duration {
	if len(a.delays) == 0 {
		return 0
	}
	return a.delays[min(len(a.delays)-1, int(q*float64(len(a.delays))))]
}

func (a arrivals) String() string {
	return fmt.Sprintf("per line written→stored p50 %v, p99 %v, max %v; last line stored %v after the last write (%v after the start)\n  written/s: %s\n  stored/s:  %s",
		a.quantile(0.5).Round(10*time.Millisecond), a.quantile(0.99).Round(10*time.Millisecond), a.quantile(1).Round(10*time.Millisecond),
		a.afterLastWrite().Round(10*time.Millisecond), a.lastStored.Sub(a.began).Round(100*time.Millisecond),
		curve(a.written), curve(a.stored))
}

func curve(c []int) string {
	s := make([]string, len(c))
	for i, n := range c {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}

// agentMetrics samples the node agent's own telemetry (its Prometheus endpoint in the node's
// network) once a second while a scenario runs, so that a slow delivery shows where the lines
// waited: read by cri_log, queued, sent.
type agentMetrics struct {
	names   []string // metric names, matched as prefixes of the exposed series (suffixes _total etc.)
	mu      sync.Mutex
	at      []time.Duration
	samples [][]float64 // per sample, per name: the sum over the series
	stop    chan struct{}
	done    chan struct{}
}

// agentMetricsURL is the node agent's metrics endpoint: the chart's default port on loopback
// (hostNetwork).
const agentMetricsURL = "http://127.0.0.1:8888/metrics"

// sampleAgent starts sampling names every second from began until the returned stop is called.
func sampleAgent(began time.Time, names ...string) *agentMetrics {
	m := &agentMetrics{names: names, stop: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 2 * time.Second}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if v, err := scrape(client, names); err == nil {
				m.mu.Lock()
				m.at = append(m.at, time.Since(began))
				m.samples = append(m.samples, v)
				m.mu.Unlock()
			}
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// Stop ends the sampling.
func (m *agentMetrics) Stop() {
	close(m.stop)
	<-m.done
}

// String is one line per metric: its value at each sample (whole numbers), after the times.
func (m *agentMetrics) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	b.WriteString("agent telemetry per second (s since the start):")
	fmt.Fprintf(&b, "\n  %-48s", "t")
	for _, at := range m.at {
		fmt.Fprintf(&b, " %d", int(at.Round(time.Second)/time.Second))
	}
	for i, name := range m.names {
		fmt.Fprintf(&b, "\n  %-48s", strings.TrimPrefix(name, "otelcol_"))
		for _, s := range m.samples {
			fmt.Fprintf(&b, " %.0f", s[i])
		}
	}
	return b.String()
}

// scrape reads the endpoint once and sums, per name, the series whose name starts with it.
func scrape(client *http.Client, names []string) ([]float64, error) {
	resp, err := client.Get(agentMetricsURL)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %s", resp.Status)
	}
	out := make([]float64, len(names))
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if i := strings.IndexByte(line, '}'); i >= 0 { // labels may hold spaces
			series, value, ok = line[:i+1], strings.TrimSpace(line[i+1:]), true
		}
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(series, "{")
		v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			continue
		}
		for i, want := range names {
			if name == want || strings.HasPrefix(name, want+"_") {
				out[i] += v
			}
		}
	}
	return out, sc.Err()
}
