// SPDX-License-Identifier: Apache-2.0

// Command cluster is the cluster part of `make run`, started by testbed/cmd/runlocal once it is
// built: bin/kube-local, a simulated controller writing Events through client-go's recorders,
// the events collector with the shipped events configuration, and traced Pods on the node
// agent's build. It is its own program because client-go's clientset and recorders compile every
// API group of Kubernetes: runlocal, which a cold `make run` compiles before the node's first
// report, links none of it. It prints its first report after -first-report and its last one
// when it is interrupted (SIGINT or SIGTERM).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "cluster part: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	kubeBin := flag.String("kube-bin", "bin/kube-local", "local API server")
	eventsBin := flag.String("events-bin", "bin/otelcol-k8s", "the collector of the events part (the full distribution)")
	nodeBin := flag.String("bin", "bin/otelcol-k8s-node", "the collector of the traced node (the node agent's build)")
	dir := flag.String("dir", "tmp/run/cluster", "working directory (kubeconfig, logs)")
	first := flag.Duration("first-report", 15*time.Second, "when to print the first report")
	events := flag.Int("events", 3, "events shown per log group")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ev, err := startEvents(ctx, *kubeBin, *eventsBin, *nodeBin, *dir)
	if err != nil {
		return err
	}
	if ev == nil {
		return nil
	}
	defer ev.stop()
	fmt.Printf("%s  cluster part running; its first report in %s\n", time.Now().Format("15:04:05"), *first)
	firstReport := time.After(*first)
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			ev.stop()
			fmt.Println()
			ev.report(*events)
			return nil
		case <-firstReport:
			fmt.Println()
			ev.report(*events)
			fmt.Println()
		case <-tick.C:
			fmt.Printf("%s  cluster part%s\n", time.Now().Format("15:04:05"), ev.status())
		}
		if err := ev.exited(); err != nil {
			return err
		}
	}
}
