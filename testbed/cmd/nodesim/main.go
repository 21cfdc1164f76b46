// SPDX-License-Identifier: Apache-2.0

// Command nodesim writes the container log files of a simulated Kubernetes node (see package
// testbed/nodesim) until its duration ends or it is interrupted, then prints what it wrote and,
// with -ledger, writes the ledger as JSON.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nodesim:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	d := nodesim.Defaults
	var cfg nodesim.Config
	var duration time.Duration
	var rate float64
	var ledgerPath string
	fs := flag.NewFlagSet("nodesim", flag.ContinueOnError)
	fs.StringVar(&cfg.Root, "root", "", "directory standing for / (files go under <root>/var/log/pods)")
	fs.DurationVar(&duration, "duration", 30*time.Second, "how long to write (0: until interrupted)")
	fs.Float64Var(&rate, "rate", 200, "lines per second across the long-lived pods")
	fs.IntVar(&cfg.Pods, "pods", d.Pods, "long-lived pods")
	fs.IntVar(&cfg.ContainersPerPod, "containers", d.ContainersPerPod, "containers per long-lived pod")
	fs.Float64Var(&cfg.ShortPodsPerSecond, "short-pods", 0.5, "pods per second that live -short-life")
	fs.DurationVar(&cfg.ShortPodLifetime, "short-life", d.ShortPodLifetime, "life of a short-lived pod")
	fs.IntVar(&cfg.ShortPodLines, "short-lines", d.ShortPodLines, "lines a short-lived pod writes")
	fs.DurationVar(&cfg.PodDeleteDelay, "delete-delay", d.PodDeleteDelay, "from a pod's end to the removal of its log directory")
	fs.Float64Var(&cfg.Mix.KlogText, "klog-text", d.Mix.KlogText, "weight of containers logging klog text")
	fs.Float64Var(&cfg.Mix.KlogJSON, "klog-json", d.Mix.KlogJSON, "weight of containers logging klog JSON")
	fs.Float64Var(&cfg.Mix.Plain, "plain", d.Mix.Plain, "weight of containers logging plain lines")
	fs.Float64Var(&cfg.Mix.Long, "long", d.Mix.Long, "fraction of lines longer than -max-line (split into partial lines)")
	fs.Float64Var(&cfg.Mix.Malformed, "malformed", 0, "fraction of malformed lines")
	fs.IntVar(&cfg.LongLineBytes, "long-bytes", d.LongLineBytes, "length of a long line")
	fs.IntVar(&cfg.MaxLineBytes, "max-line", d.MaxLineBytes, "containerd's max_container_log_line_size")
	fs.Int64Var(&cfg.RotateBytes, "rotate-bytes", d.RotateBytes, "kubelet containerLogMaxSize")
	fs.IntVar(&cfg.KeepFiles, "keep", d.KeepFiles, "kubelet containerLogMaxFiles")
	fs.DurationVar(&cfg.RotateCheck, "rotate-check", d.RotateCheck, "how often files are checked for rotation")
	fs.DurationVar(&cfg.ReopenDelay, "reopen-delay", d.ReopenDelay, "how long the runtime writes to a renamed file before it reopens")
	fs.DurationVar(&cfg.ReopenOverlap, "reopen-overlap", d.ReopenOverlap, "how long the renamed file still takes lines after the runtime created the new one (containerd: its old writer drains)")
	fs.Int64Var(&cfg.Seed, "seed", 1, "random seed")
	fs.StringVar(&ledgerPath, "ledger", "", "write the ledger JSON here at the end")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if duration == 0 {
		duration = 100 * 365 * 24 * time.Hour
	}
	cfg.Phases = []nodesim.Phase{{Duration: duration, LinesPerSecond: rate}}
	sim, err := nodesim.New(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ledger, err := sim.Run(ctx)
	if ledgerPath != "" {
		raw, jerr := json.MarshalIndent(ledger, "", "  ")
		if jerr == nil {
			jerr = os.WriteFile(ledgerPath, raw, 0o644)
		}
		if jerr != nil && err == nil {
			err = jerr
		}
	}
	fmt.Printf("nodesim: wrote %d lines (%d bytes) in %d containers of %d pods (%d deleted); %d rotations, %d compressed, %d removed\n",
		ledger.Lines, ledger.Bytes, len(ledger.Containers), ledger.PodsCreated, ledger.PodsDeleted,
		ledger.Rotations, ledger.Compressed, ledger.Removed)
	return err
}
