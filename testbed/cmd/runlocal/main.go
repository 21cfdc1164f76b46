// SPDX-License-Identifier: Apache-2.0

// Command runlocal is `make run`: it starts the local CloudWatch Logs server, a simulated node
// writing container logs like kubelet and containerd, and the node agent's build
// (bin/otelcol-k8s-node, what the DaemonSet runs) with config/run.yaml between them, then shows
// what arrived. The cluster part (cluster.go: the local API server, the events collector on
// bin/otelcol-k8s, traced Pods) needs bin/kube-local and the full distribution; with
// -cluster-build the run brings them up to date in the background and starts the cluster part
// when they are ready, so the node's logs show first.
// Ctrl-C (or -duration) stops the simulator, lets the collector deliver what was written, stops
// it, and prints the final report and accounting.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		os.Exit(1)
	}
}

func run() error {
	bin := flag.String("bin", "bin/otelcol-k8s-node", "the collector of the node part and of the traced node (the node agent's build)")
	eventsBin := flag.String("events-bin", "bin/otelcol-k8s", "the collector of the events part (the full distribution)")
	config := flag.String("config", "config/run.yaml", "collector configuration")
	dir := flag.String("dir", "tmp/run", "working directory (emptied first): node files, collector state and log")
	addr := flag.String("addr", "127.0.0.1:0", "address of the local CloudWatch Logs server")
	duration := flag.Duration("duration", 0, "how long the simulated node writes (0: until Ctrl-C)")
	rate := flag.Float64("rate", 40, "lines per second across the long-lived pods")
	pods := flag.Int("pods", 6, "long-lived pods")
	shortPods := flag.Float64("short-pods", 0.2, "one-second pods started per second")
	first := flag.Duration("first-report", 15*time.Second, "when to print the first report")
	events := flag.Int("events", 3, "events shown per log group")
	kubeBin := flag.String("kube-bin", "bin/kube-local", "local API server for the cluster part (empty: no cluster part)")
	clusterBin := flag.String("cluster-bin", "bin/runlocal-cluster", "the cluster part's program (testbed/cmd/runlocal/cluster)")
	clusterBuild := flag.String("cluster-build", "", "shell command that brings -kube-bin, -events-bin and -cluster-bin up to date, run while the node part runs (empty: them as they are)")
	flag.Parse()

	if err := os.RemoveAll(*dir); err != nil {
		return err
	}
	nodeRoot, state := filepath.Join(*dir, "node"), filepath.Join(*dir, "state")
	for _, d := range []string{nodeRoot, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}

	srv := localcloudwatch.New(localcloudwatch.Config{Credentials: map[string]string{"local": "local"}}) // verifies the collector's signatures
	endpoint, err := srv.Start(*addr)
	if err != nil {
		return fmt.Errorf("local CloudWatch Logs server: %w", err)
	}
	defer func() { _ = srv.Close() }() // the run is over: nothing left to report
	fmt.Printf("local CloudWatch Logs server at %s\n", endpoint)

	sim, err := nodesim.New(nodesim.Config{
		Root: nodeRoot, Seed: time.Now().UnixNano(), Pods: *pods,
		Phases:             []nodesim.Phase{{Duration: orForever(*duration), LinesPerSecond: *rate}},
		ShortPodsPerSecond: *shortPods, PodDeleteDelay: 5 * time.Second,
		Mix:         nodesim.Mix{KlogText: 2, KlogJSON: 1, Plain: 2, Long: 0.005, Malformed: 0.002},
		RotateBytes: 256 << 10, RotateCheck: 2 * time.Second, KeepFiles: 3,
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	simDone := make(chan error, 1)
	go func() {
		_, err := sim.Run(simCtx)
		simDone <- err
	}()
	fmt.Printf("simulated node writing %s/var/log/pods (%d pods, %.0f lines/s, one-second pods, rotation)\n", nodeRoot, *pods, *rate)

	health, err := harness.FreeAddr()
	if err != nil {
		return err
	}
	logPath := filepath.Join(*dir, "otelcol.log")
	col, err := harness.StartCollector(*bin, *config, []string{
		"OTELCOL_K8S_NODE_ROOT=" + nodeRoot, "OTELCOL_K8S_STATE=" + state,
		"OTELCOL_K8S_CLOUDWATCH=" + endpoint, "OTELCOL_K8S_HEALTH=" + health,
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true",
	}, logPath)
	if err != nil {
		return err
	}
	fmt.Printf("%s running %s (log: %s); Ctrl-C stops everything\n", filepath.Base(*bin), *config, logPath)
	clusterCtx, stopCluster := context.WithCancel(ctx)
	defer stopCluster()
	cl := startCluster(clusterCtx, *kubeBin, *clusterBuild, *eventsBin, *clusterBin, *bin, *dir,
		[]string{"-first-report", first.String(), "-events", strconv.Itoa(*events)})
	var ev *clusterProc
	defer func() { ev.stop() }()
	fmt.Println()

	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	firstReport := time.After(*first)
	var simErr error
loop:
	for {
		select {
		case r := <-cl.result:
			cl.result = nil
			if r.err != nil {
				fmt.Printf("%s  cluster part left out: %v\n", time.Now().Format("15:04:05"), r.err)
				break
			}
			ev = r.ev // it prints its own reports
		case <-ctx.Done():
			fmt.Println("\nstopping the simulated node")
			break loop
		case simErr = <-simDone:
			simDone = nil
			break loop
		case <-firstReport:
			fmt.Println()
			harness.Report(os.Stdout, srv, *events)
			if w := cl.waiting(); w != "" {
				fmt.Printf("cluster part: %s\n", w)
			}
			fmt.Println()
		case <-tick.C:
			l := sim.Ledger()
			fmt.Printf("%s  written %d lines, stored %d events%s\n", time.Now().Format("15:04:05"), l.Lines, harness.Stored(srv), cl.build.status())
		}
		if err := ev.exited(); err != nil {
			return err
		}
		if exited, err := col.Exited(); exited {
			return fmt.Errorf("%s exited (%v): see %s", filepath.Base(*bin), err, logPath) //nolint:errorlint // err is nil after a clean exit, which %w would print as %!w(<nil>)
		}
	}
	stopSim()
	if simDone != nil {
		simErr = <-simDone
	}
	if cl.result != nil { // still building or starting: stop it and take down what it started
		stopCluster()
		if r := <-cl.result; r.ev != nil {
			ev = r.ev
		}
	}
	stop() // a second Ctrl-C now ends the wait below at once
	ledger := sim.Ledger()
	wait, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	waitCtx, stopWait := signal.NotifyContext(wait, os.Interrupt, syscall.SIGTERM)
	fmt.Printf("waiting for the collector to deliver %d lines (Ctrl-C again to skip)\n", ledger.Lines)
	_, _ = harness.WaitStored(waitCtx, srv, ledger.Lines, col)
	stopWait()
	cancel()
	if err := col.Stop(15 * time.Second); err != nil {
		fmt.Fprintf(os.Stderr, "otelcol-k8s: %v\n", err)
	}
	ev.stop()
	fmt.Println()
	harness.Report(os.Stdout, srv, *events)
	acc := harness.Reconcile(srv, ledger)
	fmt.Printf("\naccounting: %s\n\n", acc)
	if simErr != nil && !errors.Is(simErr, context.Canceled) {
		return simErr
	}
	return nil
}

func orForever(d time.Duration) time.Duration {
	if d <= 0 {
		return 100 * 365 * 24 * time.Hour
	}
	return d
}
