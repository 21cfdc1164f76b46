// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness/traced"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localxray"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

// tracedNS is the namespace of the traced Pods.
const tracedNS = "traced"

// tracedRun is the traced-Pods part of `make run`: Pods with trace contexts in the local API
// server, a second simulated node writing their logs, and a node collector with the shipped
// DaemonSet configuration (trace_context, object_ref's correlation, kube_lifecycle and its
// traces pipeline to a local SigV4-verifying X-Ray endpoint).
type tracedRun struct {
	srv     *localcloudwatch.Server
	xray    *localxray.Server
	col     *harness.Collector
	pods    []*traced.Pod
	stopSim context.CancelFunc
	simDone chan struct{}
}

// startTraced starts the part on the API server of kubeconfig.
func startTraced(ctx context.Context, client kubernetes.Interface, bin, kubeconfig, dir string) (*tracedRun, error) {
	tr := &tracedRun{
		srv:  localcloudwatch.New(localcloudwatch.Config{Credentials: map[string]string{"local": "local"}}),
		xray: localxray.New(localxray.Config{Credentials: map[string]string{"local": "local"}}),
		pods: traced.Pods(),
	}
	endpoint, err := tr.srv.Start("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base, err := tr.xray.Start("127.0.0.1:0")
	if err != nil {
		tr.stop()
		return nil, err
	}
	named, err := traced.Create(ctx, client, tracedNS, "node-1", tr.pods)
	if err != nil {
		tr.stop()
		return nil, fmt.Errorf("traced Pods: %w", err)
	}
	root, state := filepath.Join(dir, "traced-node"), filepath.Join(dir, "traced-state")
	health, err := harness.FreeAddr()
	if err != nil {
		tr.stop()
		return nil, err
	}
	shipped, err := harness.LoadShippedNodeConfig(harness.ShippedTracesNodeConfigMap, harness.Local{
		NodeRoot: root, StateDir: state, Endpoint: endpoint, HealthAddr: health, Kubeconfig: kubeconfig, TracesEndpoint: base,
		Env: map[string]string{
			"K8S_NODE_NAME": "node-1", "CLUSTER_NAME": "local", "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_EC2_METADATA_DISABLED": "true",
		},
	})
	if err != nil {
		tr.stop()
		return nil, err
	}
	config, err := shipped.WriteShippedNodeConfig(dir)
	if err != nil {
		tr.stop()
		return nil, err
	}
	logPath := filepath.Join(dir, "otelcol-traced-node.log")
	if tr.col, err = harness.StartCollector(bin, config, shipped.Env, logPath); err != nil {
		tr.stop()
		return nil, err
	}
	if err := waitHealthy(ctx, health, tr.col); err != nil { // the shipped cri_log starts at the files' end
		tr.stop()
		return nil, fmt.Errorf("%w: see %s", err, logPath)
	}
	sim, err := nodesim.New(nodesim.Config{
		Root: root, Seed: time.Now().UnixNano(), Pods: 1, Named: named,
		Phases: []nodesim.Phase{{Duration: 100 * 365 * 24 * time.Hour, LinesPerSecond: 4}},
		Mix:    nodesim.Mix{KlogText: 2, KlogJSON: 1},
	})
	if err != nil {
		tr.stop()
		return nil, err
	}
	simCtx, stopSim := context.WithCancel(ctx)
	tr.stopSim, tr.simDone = stopSim, make(chan struct{})
	go func() {
		defer close(tr.simDone)
		_, _ = sim.Run(simCtx)
	}()
	// The kubelet: the Pods become ready a moment later.
	go func() {
		select {
		case <-simCtx.Done():
		case <-time.After(2 * time.Second):
			if _, err := traced.MarkReady(simCtx, client, tr.pods); err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(os.Stderr, "traced Pods' status: %v\n", err)
			}
		}
	}()
	fmt.Printf("traced Pods in namespace %s of the local API server (node-1), their logs in a second simulated node directory;\n"+
		"a node collector running the shipped %s with trace_context and kube_lifecycle (log: %s)\n", tracedNS, harness.ShippedTracesNodeConfigMap, logPath)
	return tr, nil
}

// waitHealthy waits for the collector's health check.
func waitHealthy(ctx context.Context, addr string, col *harness.Collector) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close() // only the status matters
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if exited, err := col.Exited(); exited {
			return fmt.Errorf("the traced node's collector exited (%v)", err) //nolint:errorlint // nil after a clean exit
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return errors.New("the traced node's collector is not healthy after 1m")
}

// exited reports a collector that ended on its own.
func (tr *tracedRun) exited() error {
	if tr == nil || tr.col == nil {
		return nil
	}
	if done, err := tr.col.Exited(); done {
		return fmt.Errorf("the traced node's collector exited (%v)", err) //nolint:errorlint // nil after a clean exit
	}
	return nil
}

// report prints the lifecycle spans received and the traced Pods' log lines with their trace ids.
func (tr *tracedRun) report(perPod int) {
	if tr == nil {
		return
	}
	var batches []ptrace.Traces
	for _, b := range tr.xray.Batches() {
		batches = append(batches, b.Traces)
	}
	fmt.Println("Traced Pods (shipped node configuration -> its own local CloudWatch Logs and X-Ray endpoints):")
	traced.Report(os.Stdout, traced.AllSpans(batches...), traced.StoredRecords(tr.srv), tracedNS, tr.pods, perPod)
}

// stop ends the node, the collector (which flushes its spans) and the servers.
func (tr *tracedRun) stop() {
	if tr == nil {
		return
	}
	if tr.stopSim != nil {
		tr.stopSim()
		<-tr.simDone
	}
	if tr.col != nil {
		if err := tr.col.Stop(15 * time.Second); err != nil {
			fmt.Fprintf(os.Stderr, "traced node collector: %v\n", err)
		}
	}
	_ = tr.xray.Close()
	_ = tr.srv.Close()
}
