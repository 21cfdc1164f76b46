// SPDX-License-Identifier: Apache-2.0

// Package cwbenchkit is the shared, dependency-free part of the side-by-side CloudWatch Logs
// exporter benchmark: the input corpus, CPU accounting and the local server's counters. The
// two benchmark programs (ours and contrib's exporter) build on different collector releases,
// so the only non-standard dependency is pdata at the older of the two.
package cwbenchkit

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"
)

// Record is one log record of the corpus.
type Record struct {
	Timestamp time.Time
	Body      string
}

// Source is one container log file: its resource attributes and its records.
type Source struct {
	Resource map[string]string
	Records  []Record
}

// Spec describes a corpus.
type Spec struct {
	Records   int // total records
	Streams   int // log files, one stream each
	BodyBytes int // approximate body length
	Chunk     int // records per ConsumeLogs call
}

// Flags registers the spec and endpoint flags shared by both programs.
func Flags(fs *flag.FlagSet) (*Spec, *string) {
	s := &Spec{}
	fs.IntVar(&s.Records, "records", 400_000, "records in total")
	fs.IntVar(&s.Streams, "streams", 8, "log files (streams)")
	fs.IntVar(&s.BodyBytes, "body", 200, "body bytes per record")
	fs.IntVar(&s.Chunk, "chunk", 1000, "records per ConsumeLogs call")
	endpoint := fs.String("endpoint", "", "local CloudWatch Logs server endpoint")
	return s, endpoint
}

// Chunks returns the corpus cut into ConsumeLogs calls; each chunk holds Chunk records of one
// source, as a file receiver emits them. Timestamps are spread over the last 30 minutes.
func (s Spec) Chunks() [][]Source {
	end := time.Now()
	per := s.Records / s.Streams
	step := 30 * time.Minute / time.Duration(max(per, 1))
	var chunks [][]Source
	for f := 0; f < s.Streams; f++ {
		pod := fmt.Sprintf("web-%d", f)
		res := map[string]string{
			"host.name":          "node-1",
			"k8s.node.name":      "node-1",
			"pod":                pod, // contrib's {PodName} stream template reads this key
			"k8s.namespace.name": "shop",
			"k8s.pod.name":       pod,
			"k8s.pod.uid":        fmt.Sprintf("uid-%d", f),
			"k8s.container.name": "web",
			"log.file.path":      fmt.Sprintf("/var/log/pods/shop_%s_uid-%d/web/0.log", pod, f),
		}
		pad := strings.Repeat("x", max(s.BodyBytes-60, 0))
		for start := 0; start < per; start += s.Chunk {
			src := Source{Resource: res}
			for i := start; i < min(start+s.Chunk, per); i++ {
				src.Records = append(src.Records, Record{
					Timestamp: end.Add(-time.Duration(per-i) * step),
					Body:      fmt.Sprintf("I1122 01:02:03.%06d 1 handler.go:42] request %d done %s", i%1_000_000, i, pad),
				})
			}
			chunks = append(chunks, []Source{src})
		}
	}
	// Interleave the files, as a node tails them concurrently.
	out := make([][]Source, 0, len(chunks))
	perFile := (len(chunks) + s.Streams - 1) / s.Streams
	for i := 0; i < perFile; i++ {
		for f := 0; f < s.Streams; f++ {
			if k := f*perFile + i; k < len(chunks) && (k/perFile) == f {
				out = append(out, chunks[k])
			}
		}
	}
	return out
}

// CPUSeconds is the user plus system CPU time of this process.
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// ServerStats are the local server counters the report uses.
type ServerStats struct {
	PutLogEventsAccepted int64            `json:"putLogEventsAccepted"`
	EventsAccepted       int64            `json:"eventsAccepted"`
	MessageBytesAccepted int64            `json:"messageBytesAccepted"`
	BatchBytes           int64            `json:"batchBytes"`
	Requests             map[string]int64 `json:"requests"`
	Throttles            int64            `json:"throttles"`
}

// Reset empties the local server.
func Reset(endpoint string) error {
	resp, err := http.Post(endpoint+"/local/reset", "application/json", nil)
	if err != nil {
		return err
	}
	_ = resp.Body.Close() // the status is all that is read
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("reset: %s", resp.Status)
	}
	return nil
}

// Stats reads the local server's counters.
func Stats(endpoint string) (ServerStats, error) {
	resp, err := http.Get(endpoint + "/local/summary")
	if err != nil {
		return ServerStats{}, err
	}
	defer func() { _ = resp.Body.Close() }() // read-only
	var sum struct {
		Stats ServerStats `json:"stats"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&sum); err != nil {
		return ServerStats{}, err
	}
	return sum.Stats, nil
}

// WaitAccepted polls until the server has accepted want events or the timeout passes.
func WaitAccepted(endpoint string, want int64, timeout time.Duration) (ServerStats, error) {
	deadline := time.Now().Add(timeout)
	for {
		st, err := Stats(endpoint)
		if err == nil && st.EventsAccepted >= want {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("server accepted %d of %d events before the timeout (last error: %v)", st.EventsAccepted, want, err) //nolint:errorlint // err is often nil here, which %w would print as %!w(<nil>)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Result is one benchmark run.
type Result struct {
	Exporter        string  `json:"exporter"`
	Events          int64   `json:"events"`
	CPUSeconds      float64 `json:"cpu_s"`
	WallSeconds     float64 `json:"wall_s"`
	EventsPerCPUSec float64 `json:"events_per_cpu_s"`
	PutLogEvents    int64   `json:"put_log_events"`
	MessageMiB      float64 `json:"message_mib"`
	PutsPerMiB      float64 `json:"puts_per_mib"`
	FillRatio       float64 `json:"fill_ratio"`
	OtherCalls      int64   `json:"other_calls"`
	ServerThrottles int64   `json:"server_throttles"`
}

// NewResult computes a Result from the measurements.
func NewResult(exporter string, cpu, wall float64, st ServerStats) Result {
	mib := float64(st.MessageBytesAccepted) / (1 << 20)
	r := Result{
		Exporter: exporter, Events: st.EventsAccepted, CPUSeconds: cpu, WallSeconds: wall,
		PutLogEvents: st.PutLogEventsAccepted, MessageMiB: mib, ServerThrottles: st.Throttles,
	}
	if cpu > 0 {
		r.EventsPerCPUSec = float64(st.EventsAccepted) / cpu
	}
	if mib > 0 {
		r.PutsPerMiB = float64(st.PutLogEventsAccepted) / mib
	}
	if st.PutLogEventsAccepted > 0 {
		r.FillRatio = float64(st.BatchBytes) / float64(st.PutLogEventsAccepted) / 1_048_576
	}
	for op, n := range st.Requests {
		if op != "PutLogEvents" {
			r.OtherCalls += n
		}
	}
	return r
}

// Print writes r as one JSON line.
func (r Result) Print() {
	_ = json.NewEncoder(os.Stdout).Encode(r)
}

// Fatal prints err and exits.
func Fatal(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}
