// SPDX-License-Identifier: Apache-2.0

// Package e2e runs the node agent's build (OTELCOL_K8S_NODE_BIN, set by `make e2e`, the binary
// the shipped DaemonSet runs) with the node agent's shipped configuration (deploy/kubernetes/configmap.yaml, localized by
// harness.LoadShippedNodeConfig: paths, endpoint, health address and environment swapped, and
// the components that watch the cluster left out unless a scenario starts one) between the node simulator (testbed/nodesim) and the local CloudWatch Logs
// server (testbed/localcloudwatch), through load and fault scenarios, and ends each with an exact
// accounting of every line written against every event stored.
//
// The events scenarios run the whole distribution (OTELCOL_K8S_BIN), as the events Deployment
// does. Without those variables the tests skip, except under CI, where that is a failure.
package e2e

import (
	"cmp"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

var (
	outage      = flag.Duration("e2e.outage", 10*time.Minute, "how long the local server is down in TestServerOutage")
	deliverWait = flag.Duration("e2e.deliver", 3*time.Minute, "how long to wait for the collector to deliver every line once the node stops")
	quiet       = flag.Duration("e2e.quiet", 3*time.Second, "how long to keep watching for duplicates once every line arrived")
)

// configMapPath is the shipped node agent configuration, from this directory.
const configMapPath = "../../" + harness.ShippedNodeConfigMap

// tracesConfigMapPath is the traces set's node agent configuration (the chart with
// traces.enabled), for the runs with an API server.
const tracesConfigMapPath = "../../" + harness.ShippedTracesNodeConfigMap

// binary is the whole distribution (OTELCOL_K8S_BIN), which the events Deployment runs.
func binary(t *testing.T) string {
	t.Helper()
	return builtBinary(t, "OTELCOL_K8S_BIN")
}

// nodeBinary is the node agent's build (OTELCOL_K8S_NODE_BIN), which the DaemonSet runs.
func nodeBinary(t *testing.T) string {
	t.Helper()
	return builtBinary(t, "OTELCOL_K8S_NODE_BIN")
}

func builtBinary(t *testing.T, variable string) string {
	t.Helper()
	bin := os.Getenv(variable)
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal(variable + " is not set: run the scenarios through `make e2e`")
		}
		t.Skip(variable + " is not set: run the scenarios through `make e2e`")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the binary %s names is missing: %v", variable, err)
	}
	return bin
}

// env runs one scenario: the server, the node and the collector.
type env struct {
	t        *testing.T
	bin      string
	dir      string
	srv      *localcloudwatch.Server
	endpoint string
	col      *harness.Collector
	health   string
	// runConfig runs config/run.yaml instead of the shipped configuration (see
	// TestMalformedLineStorm for the one scenario that does).
	runConfig bool
	starts    int
	// env is added to the collector's environment (e.g. an unwritable TMPDIR).
	env []string
	// sim is the scenario's node, for faults that act on it.
	sim *nodesim.Sim
	// kubeconfig and tracesEndpoint, when set, keep the shipped components that watch the
	// cluster (pointed at this API server) and the traces pipeline (sending to this OTLP/HTTP
	// endpoint); see TestTraceCorrelation.
	kubeconfig, tracesEndpoint string
	// metricsAddr, when set, keeps the collector's own metrics at the shipped level, served
	// there (see TestShippedTelemetry); otherwise they are off.
	metricsAddr string
	// queueSize, when set, replaces the shipped queue_size of the exporter's persistent queue
	// (see TestKillNineWithFullQueueDuringOutage).
	queueSize int64
	// queueStorage, when set, is the storage extension of the exporter's persistent queue
	// instead of the shipped one (see TestUpgradeFromFileStorageQueue).
	queueStorage string
}

func newEnv(t *testing.T, cfg localcloudwatch.Config) *env {
	e := &env{t: t, bin: nodeBinary(t), dir: t.TempDir()}
	if cfg.Credentials == nil { // the collector's key and secret: every signature is verified
		cfg.Credentials = map[string]string{"local": "local"}
	}
	e.srv = localcloudwatch.New(cfg)
	endpoint, err := e.srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.endpoint = endpoint
	t.Cleanup(func() { _ = e.srv.Close() })
	return e
}

func freeAddr(t *testing.T) string {
	addr, err := harness.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// start starts (or restarts) the collector on the same state directory, with the shipped
// receiver, processor and exporter settings.
func (e *env) start() {
	e.t.Helper()
	e.health = freeAddr(e.t)
	if e.runConfig {
		e.startRunConfig()
		return
	}
	cm := configMapPath
	if e.kubeconfig != "" {
		cm = tracesConfigMapPath // the components that watch the cluster are tracing's
	}
	shipped, err := harness.LoadShippedNodeConfig(cm, harness.Local{
		NodeRoot: filepath.Join(e.dir, "node"), StateDir: filepath.Join(e.dir, "state"),
		Endpoint: e.endpoint, HealthAddr: e.health, Kubeconfig: e.kubeconfig, TracesEndpoint: e.tracesEndpoint,
		MetricsAddr: e.metricsAddr,
		Env: map[string]string{
			"K8S_NODE_NAME": "node-1", "CLUSTER_NAME": "local", "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_EC2_METADATA_DISABLED": "true",
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if e.queueSize > 0 {
		if err := shipped.SetQueueSize(e.queueSize); err != nil {
			e.t.Fatal(err)
		}
	}
	if e.queueStorage != "" {
		if err := shipped.SetQueueStorage(e.queueStorage, filepath.Join(e.dir, "state")); err != nil {
			e.t.Fatal(err)
		}
	}
	config, err := shipped.WriteShippedNodeConfig(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	if e.starts == 0 {
		for _, c := range shipped.Changes {
			e.t.Logf("shipped configuration, local change: %s", c)
		}
	}
	e.starts++
	col, err := harness.StartCollector(e.bin, config, append(shipped.Env, e.env...), e.logPath())
	if err != nil {
		e.t.Fatal(err)
	}
	e.col = col
	e.t.Cleanup(func() { col.Kill() })
}

// startRunConfig starts the collector with config/run.yaml, the pipeline of `make run`.
func (e *env) startRunConfig() {
	e.t.Helper()
	config, err := filepath.Abs("../../config/run.yaml")
	if err != nil {
		e.t.Fatal(err)
	}
	e.starts++
	col, err := harness.StartCollector(e.bin, config, []string{
		"OTELCOL_K8S_NODE_ROOT=" + filepath.Join(e.dir, "node"),
		"OTELCOL_K8S_STATE=" + filepath.Join(e.dir, "state"),
		"OTELCOL_K8S_CLOUDWATCH=" + e.endpoint,
		"OTELCOL_K8S_HEALTH=" + e.health,
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true",
	}, e.logPath())
	if err != nil {
		e.t.Fatal(err)
	}
	e.col = col
	e.t.Cleanup(func() { col.Kill() })
}

// waitReady waits until the collector's health check answers: its pipeline is running and
// cri_log's first discovery (where the shipped start_at: end applies) is done.
func (e *env) waitReady() {
	e.t.Helper()
	if err := harness.WaitHealthy(e.health, e.col, 30*time.Second); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) logPath() string { return filepath.Join(e.dir, "otelcol.log") }

// dumpLog shows the end of the collector's log when the test failed, and keeps the whole log
// in testbed/results/e2e (git-ignored).
func (e *env) dumpLog() { showLogIfFailed(e.t, e.logPath(), "otelcol.log") }

// showLogIfFailed shows the end of a collector's log (at most 8,000 bytes) when t failed, and
// keeps the whole log as testbed/results/e2e/<test name>.<name> (git-ignored).
func showLogIfFailed(t *testing.T, path, name string) {
	if !t.Failed() {
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return
	}
	keep := filepath.Join("..", "results", "e2e", t.Name()+"."+name)
	if os.MkdirAll(filepath.Dir(keep), 0o755) == nil && os.WriteFile(keep, raw, 0o644) == nil {
		t.Logf("collector log kept in testbed/results/e2e/%s.%s", t.Name(), name)
	}
	if len(raw) > 8000 {
		raw = raw[len(raw)-8000:]
	}
	t.Logf("%s (end):\n%s", name, raw)
}

// scenario is a node configuration plus what happens while it runs.
type scenario struct {
	node nodesim.Config
	// during runs alongside the node; it returns when its faults are over.
	during func(ctx context.Context, e *env)
	// allowDuplicates: a kill -9 may leave records both delivered and not yet checkpointed.
	allowDuplicates bool
	// delivered, when set, runs once every line is stored and before the collector stops.
	delivered func(e *env, ledger nodesim.Ledger)
}

func run(t *testing.T, e *env, sc scenario) harness.Account {
	t.Helper()
	defer e.dumpLog()
	sc.node.Root = filepath.Join(e.dir, "node")
	if err := os.MkdirAll(filepath.Join(e.dir, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	sim, err := nodesim.New(sc.node)
	if err != nil {
		t.Fatal(err)
	}
	e.sim = sim
	e.start()
	e.waitReady()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		if sc.during != nil {
			sc.during(ctx, e)
		}
	}()
	started := time.Now()
	ledger, err := sim.Run(ctx)
	if err != nil {
		t.Fatalf("simulator: %v", err)
	}
	<-faultsDone
	t.Logf("node wrote %d lines (%d file lines, %d bytes) in %d containers of %d pods (%d deleted), %d rotations, %d compressed, %d removed, in %s",
		ledger.Lines, ledger.FileLines, ledger.Bytes, len(ledger.Containers), ledger.PodsCreated, ledger.PodsDeleted,
		ledger.Rotations, ledger.Compressed, ledger.Removed, time.Since(started).Round(time.Millisecond))
	if ledger.Removed > 0 {
		t.Logf("note: %d rotated files were removed by retention; lines in them count as missing if the collector had not read them", ledger.Removed)
	}
	stopped := time.Now()
	wctx, wcancel := context.WithTimeout(context.Background(), *deliverWait)
	stored, werr := harness.WaitStored(wctx, e.srv, ledger.Lines, e.col)
	wcancel()
	drained := time.Since(stopped)
	if werr != nil {
		t.Errorf("waiting for delivery: %v (stored %d of %d)", werr, stored, ledger.Lines)
	}
	time.Sleep(*quiet)
	if sc.delivered != nil {
		sc.delivered(e, ledger)
	}
	if err := e.col.Stop(30 * time.Second); err != nil {
		t.Errorf("collector stop: %v", err)
	}
	acc := harness.Reconcile(e.srv, ledger)
	st := e.srv.Stats()
	t.Logf("every line stored %s after the node stopped; %d PutLogEvents calls, %d throttles, %d injected 5xx; accounting: %s",
		drained.Round(time.Millisecond), st.PutLogEventsAccepted, st.Throttles, st.InjectedServerErrors, acc)
	failed := acc.Missing > 0 || acc.OutOfOrder > 0 || acc.Untracked > 0 || acc.Merged > 0 || acc.Matched != acc.Written
	if acc.Duplicated > 0 && !sc.allowDuplicates {
		failed = true
	}
	if failed {
		t.Errorf("accounting failed: %s", acc)
	}
	return acc
}

func steadyNode() nodesim.Config {
	return nodesim.Config{
		Seed: 1, Pods: 8,
		Phases:             []nodesim.Phase{{Duration: 20 * time.Second, LinesPerSecond: 500}},
		ShortPodsPerSecond: 0.5, PodDeleteDelay: 3 * time.Second,
		Mix:         nodesim.Mix{KlogText: 2, KlogJSON: 1, Plain: 2, Long: 0.01},
		RotateBytes: 1 << 20, RotateCheck: time.Second,
	}
}

func TestSteadyLoad(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 1})
	run(t, e, scenario{node: steadyNode()})
}

func TestBurst(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 2})
	n := steadyNode()
	n.Seed = 2
	n.Phases = []nodesim.Phase{
		{Duration: 4 * time.Second, LinesPerSecond: 200},
		{Duration: 4 * time.Second, LinesPerSecond: 8000},
		{Duration: 4 * time.Second, LinesPerSecond: 200},
	}
	run(t, e, scenario{node: n})
}

func TestRotationAtHighRate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 3})
	n := steadyNode()
	n.Seed, n.Pods, n.ShortPodsPerSecond = 3, 4, 0
	n.Phases = []nodesim.Phase{{Duration: 15 * time.Second, LinesPerSecond: 4000}}
	n.RotateBytes, n.RotateCheck, n.KeepFiles = 256<<10, 200*time.Millisecond, 5
	acc := run(t, e, scenario{node: n})
	_ = acc
}

func TestShortLivedPods(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 4})
	n := steadyNode()
	// A busy node: the Jobs' files are found while the read loop is busy with the others.
	n.Seed, n.Pods = 4, 4
	n.Phases = []nodesim.Phase{{Duration: 15 * time.Second, LinesPerSecond: 2000}}
	n.ShortPodsPerSecond, n.ShortPodLifetime, n.ShortPodLines, n.PodDeleteDelay = 5, time.Second, 20, 3*time.Second
	run(t, e, scenario{node: n})
}

// TestKillAndRestart kills the collector with SIGKILL twice while the node writes; checkpoints
// and the exporter queue live in file_storage, so nothing may be lost.
func TestKillAndRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 5})
	n := steadyNode()
	n.Seed = 5
	n.Phases = []nodesim.Phase{{Duration: 20 * time.Second, LinesPerSecond: 1000}}
	acc := run(t, e, scenario{node: n, allowDuplicates: true, during: func(ctx context.Context, e *env) {
		for _, at := range []time.Duration{6 * time.Second, 6 * time.Second} {
			select {
			case <-ctx.Done():
				return
			case <-time.After(at):
			}
			e.col.Kill()
			time.Sleep(2 * time.Second)
			e.start()
		}
	}})
	if e.starts != 3 {
		t.Errorf("collector started %d times, want 3 (two kills)", e.starts)
	}
	// The bound of design.md (cloudwatch_groups, section 6): a kill re-sends at most the
	// requests in flight, one batch per stream, so in every stream the copies stored a second
	// time came in at most one PutLogEvents call per kill (a call's events share an ingestion
	// time).
	const kills = 2
	for stream, calls := range resentCalls(t, e.srv) {
		if calls > kills {
			t.Errorf("stream %s: copies stored again in %d calls, more than one per kill (%d)", stream, calls, kills)
		}
	}
	t.Logf("duplicates after kill -9 (at least once): %d of %d lines", acc.Duplicated, acc.Written)
}

// resentCalls returns, per stream with duplicates, in how many PutLogEvents calls (distinct
// ingestion times) the copies of events stored before arrived.
func resentCalls(t *testing.T, srv *localcloudwatch.Server) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, g := range srv.Groups() {
		streams, err := srv.Streams(g.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range streams {
			evs, err := srv.Events(g.Name, st.Name)
			if err != nil {
				t.Fatal(err)
			}
			slices.SortStableFunc(evs, func(a, b localcloudwatch.Event) int { return cmp.Compare(a.IngestionTime, b.IngestionTime) })
			seen := map[string]bool{}
			calls := map[int64]bool{}
			for _, ev := range evs {
				if seen[ev.Message] {
					calls[ev.IngestionTime] = true
				}
				seen[ev.Message] = true
			}
			if len(calls) > 0 {
				out[g.Name+" "+st.Name] = len(calls)
			}
		}
	}
	return out
}

// TestThrottlingAndServerErrors answers 30% of requests with ThrottlingException and 10% with
// ServiceUnavailableException for most of the run.
func TestThrottlingAndServerErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 6})
	n := steadyNode()
	n.Seed = 6
	n.Phases = []nodesim.Phase{{Duration: 20 * time.Second, LinesPerSecond: 800}}
	run(t, e, scenario{node: n, during: func(ctx context.Context, e *env) {
		set(e, localcloudwatch.Faults{ThrottleRate: 0.3, ServerErrorRate: 0.1, LatencyJitter: localcloudwatch.Duration(50 * time.Millisecond)})
		select {
		case <-ctx.Done():
		case <-time.After(16 * time.Second):
		}
		set(e, localcloudwatch.Faults{})
	}})
}

// TestMalformedLineStorm mixes 30% malformed lines (no CRI header, broken klog headers, invalid
// UTF-8, truncated JSON, control characters) into the load. It runs config/run.yaml, not the
// shipped configuration: the shipped klog multi-line preset appends, by design, a line without a
// klog header to the klog record before it in the same container (that is what a klog
// continuation line looks like), so a broken klog header in a klog container is one record with
// the line before it, which this line-by-line accounting counts as merged.
func TestMalformedLineStorm(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 8})
	e.runConfig = true
	n := steadyNode()
	n.Seed = 8
	n.Phases = []nodesim.Phase{{Duration: 12 * time.Second, LinesPerSecond: 1000}}
	n.Mix.Malformed, n.Mix.Long = 0.3, 0.02
	run(t, e, scenario{node: n})
}

// TestOneStreamPerFile checks routing: every line of one container file lands in one log group
// and one stream, whatever Kubernetes objects the line mentions.
func TestOneStreamPerFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 9})
	n := steadyNode()
	n.Seed = 9
	n.Phases = []nodesim.Phase{{Duration: 8 * time.Second, LinesPerSecond: 300}}
	acc := run(t, e, scenario{node: n})
	if acc.StrayStreams > 0 {
		t.Errorf("%d container files spread over more than one group or stream: %s", acc.StrayStreams, acc)
	}
}

func set(e *env, f localcloudwatch.Faults) {
	if err := e.srv.SetFaults(f); err != nil {
		e.t.Errorf("faults %+v: %v", f, err)
	}
}
