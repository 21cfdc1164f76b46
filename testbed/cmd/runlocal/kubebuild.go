// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// kubeBuild brings what the cluster part runs up to date while the node part runs:
// bin/kube-local (etcd and kube-apiserver compiled from their Go modules, about 30 CPU-minutes
// the first time and seconds once Go's build cache holds it) and bin/otelcol-k8s (the events
// collector). How long the last build took is kept beside the first binary
// (<kube-bin>.build-time), so the run can say what it is waiting for.
type kubeBuild struct {
	bins    []string // what the command writes; the first keeps the build time
	command string   // run by sh -c
	logPath string
	last    lastBuild
	started time.Time
	running atomic.Bool
	done    chan error // one value, then closed
}

// lastBuild is what <kube-bin>.build-time says of the previous build.
type lastBuild struct {
	took time.Duration
	at   time.Time
}

// buildTimeFile is where the duration of the last build of bin is kept.
func buildTimeFile(bin string) string { return bin + ".build-time" }

// readLastBuild reads the record of the last build; the zero value when there is none or it is
// unreadable (then the run quotes the usual figure instead).
func readLastBuild(bin string) lastBuild {
	raw, err := os.ReadFile(buildTimeFile(bin))
	if err != nil {
		return lastBuild{}
	}
	f := strings.Fields(string(raw))
	if len(f) != 2 {
		return lastBuild{}
	}
	secs, err := strconv.ParseFloat(f[0], 64)
	if err != nil || secs < 0 {
		return lastBuild{}
	}
	at, err := time.Parse(time.RFC3339, f[1])
	if err != nil {
		return lastBuild{}
	}
	return lastBuild{took: time.Duration(secs * float64(time.Second)).Round(time.Second), at: at}
}

// writeLastBuild records a finished build: "<seconds> <RFC3339 end time>".
func writeLastBuild(bin string, took time.Duration, at time.Time) error {
	line := fmt.Sprintf("%.0f %s\n", took.Seconds(), at.UTC().Format(time.RFC3339))
	return os.WriteFile(buildTimeFile(bin), []byte(line), 0o644)
}

// describe is what the run prints when it starts the build.
func (b *kubeBuild) describe() string {
	what := fmt.Sprintf("building %s for the cluster part (`%s`, log: %s)", b.names(), b.command, b.logPath)
	switch {
	case b.last.took > 0:
		return fmt.Sprintf("%s; the last build took %s (%s)", what, b.last.took, b.last.at.Local().Format("2006-01-02 15:04"))
	default:
		return what + "; the first build takes about 30 CPU-minutes (15 minutes or more on 2 cores), later ones seconds from Go's build cache"
	}
}

// startKubeBuild runs command in its own process group at a lower priority than the node part,
// with its output in logPath.
func startKubeBuild(ctx context.Context, bins []string, command, logPath string) (*kubeBuild, error) {
	b := &kubeBuild{bins: bins, command: command, logPath: logPath, last: readLastBuild(bins[0]), done: make(chan error, 1)}
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("sh", "-c", command) //nolint:gosec // the build command the Makefile gives
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("%s: %w", command, err)
	}
	// The node part is what the run shows first: the compiler gets what the node leaves over.
	_ = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, 10)
	b.started = time.Now()
	b.running.Store(true)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	go func() {
		defer close(b.done)
		defer func() { _ = out.Close() }() // the build's log: nothing to report on close
		select {
		case err := <-waited:
			b.running.Store(false)
			b.done <- b.finished(err)
		case <-ctx.Done():
			// The whole group: sh, make, go and its compilers. What was compiled stays in Go's
			// build cache for the next run.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			<-waited
			b.running.Store(false)
			b.done <- ctx.Err()
		}
	}()
	return b, nil
}

// finished checks the build's outcome and records its duration.
func (b *kubeBuild) finished(err error) error {
	took := time.Since(b.started)
	if err != nil {
		return fmt.Errorf("%s failed after %s (%w): see %s", b.command, took.Round(time.Second), err, b.logPath)
	}
	for _, bin := range b.bins {
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s finished without writing %s: see %s", b.command, bin, b.logPath)
		}
	}
	if err := writeLastBuild(b.bins[0], took, time.Now()); err != nil {
		fmt.Fprintf(os.Stderr, "recording the build time: %v\n", err)
	}
	fmt.Printf("%s  %s built in %s\n", time.Now().Format("15:04:05"), b.names(), took.Round(time.Second))
	return nil
}

// names are the binaries' file names, for messages.
func (b *kubeBuild) names() string {
	names := make([]string, len(b.bins))
	for i, bin := range b.bins {
		names[i] = filepath.Base(bin)
	}
	return strings.Join(names, " and ")
}

// status is the build's part of the periodic progress line ("" once it is over).
func (b *kubeBuild) status() string {
	if b == nil || !b.running.Load() {
		return ""
	}
	s := fmt.Sprintf("; building %s: %s", b.names(), time.Since(b.started).Round(time.Second))
	if b.last.took > 0 {
		s += fmt.Sprintf(" (last build %s)", b.last.took)
	}
	return s
}
