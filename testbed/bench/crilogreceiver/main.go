// SPDX-License-Identifier: Apache-2.0

// Command crilogbench compares the cri_log receiver with contrib's filelog receiver and its
// container operator on the same generated corpus of CRI log files.
//
//	crilogbench gen -dir D [-files 200] [-lines 2000000] [-partial 0.1] [-seed 1]
//	crilogbench run -dir D -receiver cri_log|filelog
//	crilogbench idle -dir D -receiver cri_log|filelog [-files 1000] [-seconds 10]
//
// "run" starts one receiver in this process with a counting consumer, waits until every entry
// of the corpus arrived, and prints one JSON line: lines per CPU-second and peak RSS. Run each
// receiver in its own process so that peak RSS is its own.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/filelogreceiver"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver"
)

// manifest describes a generated corpus.
type manifest struct {
	Files   int   `json:"files"`
	Lines   int64 `json:"lines"`
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crilogbench gen|run [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2:])
	case "run":
		err = run(os.Args[2:])
	case "idle":
		err = idle(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crilogbench:", err)
		os.Exit(1)
	}
}

// Messages shaped like Kubernetes components' structured logs (klog text and JSON), whose
// average entry length is a couple of hundred bytes.
var messages = []string{
	`I0501 10:11:12.123456       1 controller.go:123] "Reconciled object" controller="deployment" object="default/web-7c9d8f" namespace="default" name="web-7c9d8f" reconcileID="a1b2c3d4" duration="1.2ms"`,
	`E0501 10:11:12.223456       1 reflector.go:147] "Failed to watch" err="the server has asked for the client to provide credentials" reflector="k8s.io/client-go/informers/factory.go:150" type="*v1.Pod"`,
	`{"ts":1714558272123.456,"caller":"server/handler.go:88","msg":"request served","v":2,"method":"GET","path":"/api/v1/namespaces/default/pods","status":200,"latency":"3.1ms","user":"system:serviceaccount:kube-system:coredns"}`,
	`W0501 10:11:13.000001       1 warnings.go:70] metadata.finalizers: "example.com/cleanup": prefer a domain-qualified finalizer name`,
	`10.0.0.12 - - [01/May/2024:10:11:12 +0000] "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/1.30"`,
	`I0501 10:11:14.555555       1 event.go:389] "Event occurred" object="kube-system/coredns-5d78c9869d-abcde" fieldPath="" kind="Pod" apiVersion="v1" type="Normal" reason="Scheduled" message="Successfully assigned kube-system/coredns-5d78c9869d-abcde to node-1"`,
}

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	dir := fs.String("dir", "", "output directory")
	files := fs.Int("files", 200, "number of container log files")
	lines := fs.Int64("lines", 2_000_000, "physical lines in total")
	partial := fs.Float64("partial", 0.1, "fraction of entries split into partial lines")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("gen: -dir is required")
	}
	rng := rand.New(rand.NewPCG(*seed, 2)) //nolint:gosec // a seeded, reproducible corpus, not a secret
	m := manifest{Files: *files}
	perFile := *lines / int64(*files)
	clock := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for f := 0; f < *files; f++ {
		d := filepath.Join(*dir, fmt.Sprintf("ns%d_pod-%d_%08x-uid", f%20, f, f), "app")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		out, err := os.Create(filepath.Join(d, "0.log"))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(out, 1<<20)
		var written int64
		for written < perFile {
			msg := messages[rng.IntN(len(messages))]
			msg += strings.Repeat(" pad", rng.IntN(20))
			stream := "stdout"
			if rng.IntN(10) < 3 {
				stream = "stderr"
			}
			pieces := 1
			if rng.Float64() < *partial {
				pieces = 2 + rng.IntN(3)
			}
			pieces = int(min(int64(pieces), perFile-written))
			size := (len(msg) + pieces - 1) / pieces
			for p := 0; p < pieces; p++ {
				clock = clock.Add(time.Microsecond)
				piece := msg[min(p*size, len(msg)):min((p+1)*size, len(msg))]
				tag := "P"
				if p == pieces-1 {
					tag = "F"
				}
				n, _ := fmt.Fprintf(w, "%s %s %s %s\n", clock.Format(time.RFC3339Nano), stream, tag, piece)
				m.Bytes += int64(n)
				written++
			}
			m.Entries++
		}
		m.Lines += written
		if err := w.Flush(); err != nil {
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
	}
	b, _ := json.Marshal(m)
	return os.WriteFile(filepath.Join(*dir, "manifest.json"), b, 0o644)
}

// counter counts records and signals when the expected number arrived.
type counter struct {
	n    atomic.Int64
	want int64
	done chan struct{}
}

func (c *counter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *counter) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	if c.n.Add(int64(ld.LogRecordCount())) >= c.want {
		select {
		case <-c.done:
		default:
			close(c.done)
		}
	}
	return nil
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	dir := fs.String("dir", "", "corpus directory made by gen")
	which := fs.String("receiver", "cri_log", "cri_log or filelog")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(*dir, "manifest.json"))
	if err != nil {
		return err
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	c := &counter{want: m.Entries, done: make(chan struct{})}
	rcv, err := newReceiver(*which, *dir, c)
	if err != nil {
		return err
	}
	before := cpuTime()
	start := time.Now()
	if err := rcv.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return err
	}
	select {
	case <-c.done:
	case <-time.After(*timeout):
		return fmt.Errorf("%s: timed out with %d of %d entries", *which, c.n.Load(), m.Entries)
	}
	wall := time.Since(start)
	cpu := cpuTime() - before
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	_ = rcv.Shutdown(context.Background())
	res := map[string]any{
		"receiver": *which, "lines": m.Lines, "entries": c.n.Load(), "bytes": m.Bytes,
		"wall_s": wall.Seconds(), "cpu_s": cpu.Seconds(),
		"lines_per_cpu_s": float64(m.Lines) / cpu.Seconds(),
		"peak_rss_mib":    float64(ru.Maxrss) / 1024,
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return nil
}

// newReceiver creates the named receiver reading dir/*/*/*.log from the beginning.
func newReceiver(which, dir string, next consumer.Logs) (receiver.Logs, error) {
	include := filepath.Join(dir, "*", "*", "*.log")
	var (
		factory receiver.Factory
		conf    map[string]any
	)
	switch which {
	case "cri_log":
		factory = crilogreceiver.NewFactory()
		conf = map[string]any{"include": []string{include}, "start_at": "beginning"}
	case "filelog":
		factory = filelogreceiver.NewFactory()
		conf = map[string]any{
			"include": []string{include}, "start_at": "beginning", "include_file_path": true,
			"operators": []any{map[string]any{"type": "container"}},
		}
	default:
		return nil, fmt.Errorf("unknown receiver %q", which)
	}
	cfg := factory.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(conf).Unmarshal(cfg); err != nil {
		return nil, err
	}
	return factory.CreateLogs(context.Background(), receivertest.NewNopSettings(factory.Type()), cfg, next)
}

// idle measures the cost of watching many quiet files: after every file's one line arrived,
// it measures CPU time over a window in which nothing is written.
func idle(args []string) error {
	fs := flag.NewFlagSet("idle", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for the quiet files (created)")
	which := fs.String("receiver", "cri_log", "cri_log or filelog")
	files := fs.Int("files", 1000, "number of quiet files")
	seconds := fs.Int("seconds", 10, "measurement window")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the window to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for f := 0; f < *files; f++ {
		d := filepath.Join(*dir, fmt.Sprintf("ns_quiet-%d_%08x-uid", f, f), "app")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		line := fmt.Sprintf("2024-05-01T10:00:00.000000001Z stdout F quiet file %d\n", f)
		if err := os.WriteFile(filepath.Join(d, "0.log"), []byte(line), 0o644); err != nil {
			return err
		}
	}
	c := &counter{want: int64(*files), done: make(chan struct{})}
	rcv, err := newReceiver(*which, *dir, c)
	if err != nil {
		return err
	}
	if err := rcv.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return err
	}
	select {
	case <-c.done:
	case <-time.After(time.Minute):
		return fmt.Errorf("%s: only %d of %d files read", *which, c.n.Load(), *files)
	}
	// Let start-up work settle, and the files become quiet (cri_log looks at a file less
	// often after 10 s without growth): what a node's long-idle files cost.
	time.Sleep(12 * time.Second)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }() // a diagnostic profile: a failed close does not change the result
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	before := cpuTime()
	window := time.Duration(*seconds) * time.Second
	time.Sleep(window)
	cpu := cpuTime() - before
	pprof.StopCPUProfile()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	_ = rcv.Shutdown(context.Background())
	b, _ := json.Marshal(map[string]any{
		"receiver": *which, "files": *files,
		"idle_core_percent": 100 * cpu.Seconds() / window.Seconds(), "peak_rss_mib": float64(ru.Maxrss) / 1024,
	})
	fmt.Println(string(b))
	return nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
