// SPDX-License-Identifier: Apache-2.0

// Package eventsbenchkit is what the two receiver runners of the Events benchmark
// (testbed/bench/k8sevents: kube_events; testbed/bench/k8sevents-upstream: contrib's
// k8s_events) share: the flags, a records file the driver reads, and the wait for SIGTERM. It
// uses the standard library only, so each runner keeps its own collector version.
package eventsbenchkit

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Flags are a runner's command line.
type Flags struct {
	Kubeconfig string
	Records    string
	Identity   string
	CPUProfile string
}

// ParseFlags reads the runner's command line.
func ParseFlags() Flags {
	var f Flags
	flag.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig of the API server (required)")
	flag.StringVar(&f.Records, "records", "", "file the records are appended to, one line each: uid, count, state (required)")
	flag.StringVar(&f.Identity, "identity", "bench", "holder identity, where the receiver elects a leader")
	flag.StringVar(&f.CPUProfile, "cpuprofile", "", "write a CPU profile of the whole run here")
	flag.Parse()
	if f.Kubeconfig == "" || f.Records == "" {
		fmt.Fprintln(os.Stderr, "-kubeconfig and -records are required")
		os.Exit(2)
	}
	return f
}

// Sink appends one line per record to the records file: "uid<TAB>count<TAB>state". Lines are
// buffered and flushed every 100ms (and at Close), so writing them costs both runners the
// same few hundred nanoseconds, not a system call each.
type Sink struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// OpenSink creates (or appends to) the records file.
func OpenSink(path string) (*Sink, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	s := &Sink{f: f, w: bufio.NewWriterSize(f, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go s.flushLoop()
	return s, nil
}

func (s *Sink) flushLoop() {
	defer close(s.done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			s.mu.Lock()
			_ = s.w.Flush()
			s.mu.Unlock()
		}
	}
}

// Record appends one record.
func (s *Sink) Record(uid string, count int64, state string) {
	s.mu.Lock()
	_, _ = s.w.WriteString(uid)
	_ = s.w.WriteByte('\t')
	_, _ = s.w.WriteString(strconv.FormatInt(count, 10))
	_ = s.w.WriteByte('\t')
	_, _ = s.w.WriteString(state)
	_ = s.w.WriteByte('\n')
	s.mu.Unlock()
}

// Close flushes and closes the file.
func (s *Sink) Close() error {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.w.Flush(); err != nil {
		return err
	}
	return s.f.Close()
}

// Run starts the receiver through start, prints "running" once it started, waits for SIGTERM
// or SIGINT, stops it with stop and closes the sink; with cpuProfile set, the run is profiled.
func Run(sink *Sink, cpuProfile string, start func(ctx context.Context) error, stop func(ctx context.Context) error) {
	if err := run(sink, cpuProfile, start, stop); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(sink *Sink, cpuProfile string, start func(ctx context.Context) error, stop func(ctx context.Context) error) error {
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if err := start(context.Background()); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	fmt.Println("running")
	<-ctx.Done()
	stopCtx, cancelStop := context.WithTimeout(context.Background(), time.Minute)
	defer cancelStop()
	err := stop(stopCtx)
	if cerr := sink.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	return nil
}
