// SPDX-License-Identifier: Apache-2.0

// Command benche2e is `make bench-e2e`: the system benchmark. It writes one corpus with the node
// simulator, then, in one run and alternating, lets each collector read it from the beginning and
// send it to the same local CloudWatch Logs server: bin/otelcol-k8s with the node agent's shipped
// configuration (the DaemonSet's ConfigMap and environment, see harness.LoadShippedNodeConfig; or
// -config config/run.yaml) and the closest upstream pipeline (testbed/bench/e2e-upstream: contrib
// file_log with the container operator and a klog regex parser, into contrib awscloudwatchlogs).
// For each run it reports the events stored, the collector's CPU time and peak RSS when the last
// event arrived, the peaks of its anonymous and file-backed resident memory (RssAnon, RssFile)
// sampled every 50 ms, events per CPU-second and PutLogEvents calls per MiB of corpus, then the
// medians and ratios.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

// cpuProfileLength is how much of a run -heap-profiles keeps as a CPU profile (-cpu-profile).
var cpuProfileLength = 10 * time.Second

// progress is the -progress flag: print, about once a second, the events stored so far and
// the collector's CPU time, to see where a run's time goes.
var progress bool

// heapProfiles is the -heap-profiles directory.
var heapProfiles string

type pipeline struct {
	Name, Bin, Config string
	// QueueStorage, with the shipped configuration, is the storage extension that holds the
	// exporter's persistent queue instead of the shipped one, or harness.MemoryQueue
	// (-node-queue-storages).
	QueueStorage string
	// MessageFormat, with the shipped configuration, is the exporter's message_format instead
	// of the shipped one (-node-message-formats).
	MessageFormat string
}

// shippedConfig is the -config value that selects the DaemonSet's configuration.
const shippedConfig = "shipped"

type result struct {
	Pipeline      string  `json:"pipeline"`
	Round         int     `json:"round"`
	Lines         int64   `json:"lines"`
	Events        int64   `json:"events"`
	Seconds       float64 `json:"seconds"`
	CPUSeconds    float64 `json:"cpuSeconds"`
	StartCPU      float64 `json:"startCpuSeconds,omitempty"`
	PeakRSSMiB    float64 `json:"peakRssMiB"`
	PeakAnonMiB   float64 `json:"peakRssAnonMiB"`
	PeakFileMiB   float64 `json:"peakRssFileMiB"`
	EventsPerCPUs float64 `json:"eventsPerCpuSecond"`
	Calls         int64   `json:"putLogEventsCalls"`
	CallsPerMiB   float64 `json:"callsPerMiB"`
	CorpusMiB     float64 `json:"corpusMiB"`
	// MessageBytesPerEvent is the stored messages' bytes per event: what each collector puts
	// in an event (the log line alone, or with its metadata) is part of the work it does.
	MessageBytesPerEvent float64 `json:"messageBytesPerEvent"`
	// MessageMiBPerCPUs is the stored messages' MiB per CPU-second.
	MessageMiBPerCPUs float64 `json:"messageMiBPerCpuSecond"`
	Complete          bool    `json:"complete"`
	CollectorError    string  `json:"collectorError,omitempty"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-e2e:", err)
		os.Exit(1)
	}
}

func run() error {
	ours := flag.String("bin", "bin/otelcol-k8s", "otelcol-k8s binary")
	oursConfig := flag.String("config", shippedConfig, `otelcol-k8s configuration: "shipped" (the DaemonSet's ConfigMap and environment, as in deploy/kubernetes) or a file such as config/run.yaml`)
	upstream := flag.String("upstream-bin", "bin/otelcol-upstream", "upstream pipeline binary (testbed/bench/e2e-upstream)")
	upstreamConfig := flag.String("upstream-config", "testbed/bench/e2e-upstream/config.yaml", "upstream pipeline configuration")
	dir := flag.String("dir", "tmp/bench-e2e", "working directory (emptied first)")
	lines := flag.Int("lines", 200000, "corpus lines")
	pods := flag.Int("pods", 8, "pods in the corpus")
	rounds := flag.Int("rounds", 3, "runs of each pipeline, alternating")
	timeout := flag.Duration("timeout", 5*time.Minute, "longest run")
	stall := flag.Duration("stall", 30*time.Second, "end a run when no event arrived for this long")
	out := flag.String("out", "", "also append the JSON lines here")
	sustain := flag.String("sustain", "", "instead of the corpus runs: comma-separated live write rates (lines/s) to try with the collectors on GOMAXPROCS=1")
	sustainFor := flag.Duration("sustain-for", 20*time.Second, "how long the node writes at each -sustain rate")
	only := flag.String("only", "", "run only these pipelines (comma-separated: otelcol-k8s, otelcol-k8s-node, upstream), for profiling one side")
	node := flag.String("node-bin", "", "also run the node agent's build (builder-config-node.yaml, make build-node) with -config")
	idleFiles := flag.Int("idle", 0, "instead of the corpus runs: this many quiet files of one line each; report each collector's CPU and memory once it has read them")
	idleFor := flag.Duration("idle-for", 20*time.Second, "how long -idle measures")
	fluentBit := flag.String("fluentbit-bin", "", "instead of otelcol-k8s and the upstream pipeline: the node agent (-node-bin, -config) side by side with this Fluent Bit binary (tail with the cri parser into cloudwatch_logs over plain HTTP)")
	criRecords := flag.Int("cri-records", 0, "instead of the simulated node's corpus: this many CRI entries of plain text, every 10th split into P and F lines")
	criFiles := flag.Int("cri-files", 200, "container log files of the -cri-records corpus")
	messageFormats := flag.String("node-message-formats", "", `with -fluentbit-bin and -config shipped: comma-separated message formats (json, raw) to also run the node agent with (pipelines "otelcol-k8s-node-<format>"): what the bytes of the messages cost`)
	queueStorages := flag.String("node-queue-storages", "", `with -fluentbit-bin and -config shipped: comma-separated storage extensions (file_storage, queue_storage) to also run the node agent with, each holding the exporter's persistent queue instead of the shipped one, or memory for the queue in memory as Fluent Bit's buffer here (pipelines "otelcol-k8s-node-<storage>")`)
	flag.StringVar(&fluentBitOpts.memBufLimit, "fluentbit-mem-buf-limit", "", "Fluent Bit's tail Mem_Buf_Limit, e.g. 50MB (none by default)")
	flag.BoolVar(&fluentBitOpts.filesystem, "fluentbit-filesystem", false, "Fluent Bit buffers chunks on disk (storage.type filesystem; needs a build with the storage_backlog input, which the minimal one in ../shared/bench lacks)")
	flag.StringVar(&heapProfiles, "heap-profiles", "", "with -config shipped: add the pprof extension to otelcol-k8s (and to the -node-bin pipeline, which then must be a build with it, such as bin/otelcol-k8s) and keep, per run, the heap profile taken at its highest RssAnon and a CPU profile of its first 10 s in this directory (profiling costs CPU: not for measured runs)")
	flag.DurationVar(&cpuProfileLength, "cpu-profile", cpuProfileLength, "with -heap-profiles: how long the CPU profile of each run is, from its start")
	flag.BoolVar(&progress, "progress", false, "print the events stored and the collector's CPU time about once a second during each run (stderr)")
	flag.Parse()
	if *fluentBit != "" {
		if err := checkFluentBit(*fluentBit); err != nil {
			return err
		}
	}
	if *sustain != "" || *idleFiles > 0 {
		pipes := []pipeline{{"otelcol-k8s", *ours, *oursConfig, "", ""}}
		if *node != "" {
			pipes = append(pipes, pipeline{"otelcol-k8s-node", *node, *oursConfig, "", ""})
		}
		pipes = append(pipes, pipeline{"upstream", *upstream, *upstreamConfig, "", ""})
		if *only != "" {
			pipes = slices.DeleteFunc(pipes, func(p pipeline) bool { return !slices.Contains(strings.Split(*only, ","), p.Name) })
		}
		if *idleFiles > 0 {
			return idle(*idleFiles, *idleFor, *dir, pipes)
		}
		return sustained(*sustain, *sustainFor, *dir, *pods, pipes)
	}

	if err := os.RemoveAll(*dir); err != nil {
		return err
	}
	corpus := filepath.Join(*dir, "corpus")
	// expect is the number of events a complete run stores.
	var expect, corpusBytes int64
	if *criRecords > 0 {
		fmt.Fprintf(os.Stderr, "writing a CRI corpus of %d entries in %d files ...\n", *criRecords, *criFiles)
		lines, n, err := writeCRICorpus(corpus, *criRecords, *criFiles)
		if err != nil {
			return err
		}
		expect, corpusBytes = int64(*criRecords), n
		fmt.Fprintf(os.Stderr, "corpus: %d entries, %d lines, %.1f MiB\n", expect, lines, float64(n)/(1<<20))
	} else {
		fmt.Fprintf(os.Stderr, "writing a corpus of %d lines (%d pods) ...\n", *lines, *pods)
		sim, err := nodesim.New(nodesim.Config{
			Root: corpus, Seed: 42, Pods: *pods,
			Phases: []nodesim.Phase{{Duration: 10 * time.Second, LinesPerSecond: float64(*lines) / 10}},
			Mix:    nodesim.Mix{KlogText: 2, KlogJSON: 1, Plain: 2, Long: 0.002},
			// No rotation and no short-lived pods: both pipelines read the same files at rest.
			RotateBytes: 1 << 40, ShortPodsPerSecond: 0,
		})
		if err != nil {
			return err
		}
		ledger, err := sim.Run(context.Background())
		if err != nil {
			return err
		}
		expect, corpusBytes = ledger.Lines, ledger.Bytes
		fmt.Fprintf(os.Stderr, "corpus: %d lines, %.1f MiB\n", ledger.Lines, float64(ledger.Bytes)/(1<<20))
	}
	corpusMiB := float64(corpusBytes) / (1 << 20)

	srv, endpoint, err := startServer()
	if err != nil {
		return err
	}
	defer func() { _ = srv.Close() }() // the benchmark's results are already out

	pipes := []pipeline{{"otelcol-k8s", *ours, *oursConfig, "", ""}}
	if *node != "" {
		pipes = append(pipes, pipeline{"otelcol-k8s-node", *node, *oursConfig, "", ""})
	}
	pipes = append(pipes, pipeline{"upstream", *upstream, *upstreamConfig, "", ""})
	if *fluentBit != "" {
		if *node == "" {
			return errors.New("-fluentbit-bin compares the node agent: set -node-bin")
		}
		pipes = []pipeline{{"otelcol-k8s-node", *node, *oursConfig, "", ""}}
		for _, st := range listed(*queueStorages) {
			pipes = append(pipes, pipeline{"otelcol-k8s-node-" + strings.ReplaceAll(st, "/", "-"), *node, *oursConfig, st, ""})
		}
		for _, f := range listed(*messageFormats) {
			pipes = append(pipes, pipeline{"otelcol-k8s-node-" + f, *node, *oursConfig, "", f})
		}
		pipes = append(pipes, pipeline{fluentBitName, *fluentBit, "", "", ""})
		if (*queueStorages != "" || *messageFormats != "") && *oursConfig != shippedConfig {
			return errors.New("-node-queue-storages and -node-message-formats change the shipped configuration: leave -config out")
		}
	} else if *queueStorages != "" || *messageFormats != "" {
		return errors.New("-node-queue-storages and -node-message-formats are for the -fluentbit-bin comparison")
	}
	if *only != "" {
		kept := pipes[:0]
		for _, p := range pipes {
			if slices.Contains(strings.Split(*only, ","), p.Name) {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 {
			return fmt.Errorf("-only %q: no such pipeline", *only)
		}
		pipes = kept
	}
	var results []result
	var sink *os.File
	if *out != "" {
		if sink, err = os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			return err
		}
		defer func() { _ = sink.Close() }() // unbuffered: each write is checked where it is made
	}
	for r := 1; r <= *rounds; r++ {
		for _, p := range pipes {
			res, err := runOne(p, r, *dir, corpus, endpoint, srv, expect, *timeout, *stall)
			if err == nil && res.Events == 0 && res.CollectorError == "" {
				err = errors.New("no event arrived: see the collector's log in -dir")
			}
			if err != nil {
				return fmt.Errorf("%s round %d: %w", p.Name, r, err)
			}
			res.CorpusMiB = corpusMiB
			res.CallsPerMiB = float64(res.Calls) / corpusMiB
			raw, _ := json.Marshal(res)
			fmt.Println(string(raw))
			if sink != nil {
				if _, err := fmt.Fprintln(sink, string(raw)); err != nil {
					return fmt.Errorf("-out: %w", err)
				}
			}
			results = append(results, res)
		}
	}
	summarize(results, pipes)
	return nil
}

// started is a collector of one run with the corpus in place; stop stops it and puts the
// corpus back where the shipped configuration's run moved it from.
type started struct {
	col   *harness.Collector
	start time.Time
	stop  func() error
	// startCPU is the CPU time the collector used until it was ready, when the run waits for
	// that (the shipped configuration); it is part of the run's CPU time.
	startCPU time.Duration
}

// startRun starts pipeline p on the corpus at corpus (a node root with var/log/pods): with
// the shipped configuration, the corpus moves into a node root of its own once the collector
// is ready, since the DaemonSet reads files present at its first start from their end
// (start_at: end) and files that appear later from their beginning, as a node's pods would.
func startRun(p pipeline, tag, dir, corpus, endpoint string) (*started, error) {
	state := filepath.Join(dir, "state-"+tag)
	if err := os.MkdirAll(state, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, tag+".log")
	config := p.Config
	var env []string
	var node string // the shipped configuration's node root
	var health string
	var err error
	pprofAddr = ""
	switch {
	case p.Name == fluentBitName:
		config, env, err = fluentBitRun(dir, corpus, state, endpoint, tag)
	case p.Config == shippedConfig:
		node = filepath.Join(dir, "node-"+tag)
		config, env, health, err = shippedRun(dir, node, state, endpoint, p, tag)
	default:
		env, err = fileConfigEnv(corpus, state, endpoint)
	}
	if err != nil {
		return nil, err
	}
	col, err := harness.StartCollector(p.Bin, config, env, logPath)
	if err != nil {
		return nil, err
	}
	s := &started{col: col, start: time.Now(), stop: func() error { return col.Stop(20 * time.Second) }}
	if node == "" {
		return s, nil
	}
	if err := harness.WaitHealthy(health, col, 30*time.Second); err != nil {
		_ = s.stop() // the wait's error is the one to report
		return nil, err
	}
	if c, _, err := harness.ProcUsage(col.Pid()); err == nil {
		s.startCPU = c
	}
	pods, moved := filepath.Join(corpus, "var/log/pods"), filepath.Join(node, "var/log/pods")
	if err := os.Rename(pods, moved); err != nil {
		_ = s.stop() // the rename's error is the one to report
		return nil, err
	}
	s.stop = func() error {
		_ = col.Stop(20 * time.Second) // before the files go back; its error does not matter here
		if err := os.Rename(moved, pods); err != nil {
			return fmt.Errorf("moving the corpus back: %w", err)
		}
		return nil
	}
	return s, nil
}

// startServer starts the local CloudWatch Logs server every run sends to: messages counted
// and discarded, no quotas.
func startServer() (*localcloudwatch.Server, string, error) {
	srv := localcloudwatch.New(localcloudwatch.Config{DiscardMessages: true, Quotas: localcloudwatch.Unlimited()})
	endpoint, err := srv.Start("127.0.0.1:0")
	return srv, endpoint, err
}

func runOne(p pipeline, round int, dir, corpus, endpoint string, srv *localcloudwatch.Server, lines int64, timeout, stall time.Duration) (_ result, err error) {
	srv.Reset()
	run, err := startRun(p, fmt.Sprintf("%s-%d", p.Name, round), dir, corpus, endpoint)
	if err != nil {
		return result{}, err
	}
	defer func() { err = errors.Join(err, run.stop()) }()
	col, start := run.col, run.start
	res := result{Pipeline: p.Name, Round: round, Lines: lines, StartCPU: run.startCPU.Seconds()}
	var last int64
	lastChange, lastProgress := start, start
	var cpu time.Duration
	var rss int64
	var peak harness.Memory
	if pprofAddr != "" {
		stop := keepHeapProfile(col.Pid(), pprofAddr, filepath.Join(heapProfiles, fmt.Sprintf("%s-%d.heap.pb.gz", p.Name, round)))
		defer stop()
		// And a CPU profile of the run's first seconds (the corpus takes a few), waited for
		// before the collector stops.
		profiled := make(chan struct{})
		go func() {
			defer close(profiled)
			keepCPUProfile(pprofAddr, cpuProfileLength, filepath.Join(heapProfiles, fmt.Sprintf("%s-%d.cpu.pb.gz", p.Name, round)))
		}()
		defer func() { <-profiled }()
	}
	for {
		time.Sleep(50 * time.Millisecond)
		if exited, werr := col.Exited(); exited {
			res.CollectorError = fmt.Sprint(errors.Join(harness.ErrExited, werr))
			break
		}
		c, r, uerr := harness.ProcUsage(col.Pid())
		if uerr == nil {
			cpu, rss = c, r
		}
		if m, merr := harness.ProcMemory(col.Pid()); merr == nil {
			peak = peak.Max(m)
		}
		n := srv.Stats().EventsAccepted
		if progress && time.Since(lastProgress) >= time.Second {
			lastProgress = time.Now()
			fmt.Fprintf(os.Stderr, "%s %5.1f s: %d events, %.2f CPU-s, RssAnon %.0f MiB\n", p.Name, time.Since(start).Seconds(), n, cpu.Seconds(), float64(peak.Anon)/(1<<20))
		}
		if n != last {
			last, lastChange = n, time.Now()
			res.Seconds = time.Since(start).Seconds()
			res.CPUSeconds = cpu.Seconds()
		}
		if n >= lines {
			res.Complete = true
			break
		}
		if time.Since(lastChange) > stall || time.Since(start) > timeout {
			break
		}
	}
	st := srv.Stats()
	res.Events = st.EventsAccepted
	res.Calls = st.PutLogEventsAccepted
	res.PeakRSSMiB = float64(rss) / (1 << 20)
	res.PeakAnonMiB = float64(peak.Anon) / (1 << 20)
	res.PeakFileMiB = float64(peak.File) / (1 << 20)
	if res.CPUSeconds > 0 {
		res.EventsPerCPUs = float64(res.Events) / res.CPUSeconds
		res.MessageMiBPerCPUs = float64(st.MessageBytesAccepted) / (1 << 20) / res.CPUSeconds
	}
	if res.Events > 0 {
		res.MessageBytesPerEvent = float64(st.MessageBytesAccepted) / float64(res.Events)
	}
	return res, nil
}

// fileConfigEnv is the environment of a run with a configuration file (the upstream pipeline,
// or -config): where the corpus, the state and the local CloudWatch Logs server are, and a free
// port for the collector's own metrics (OTELCOL_K8S_METRICS_PORT), which every collector
// measured here serves at its shipped or default level, as users run it.
func fileConfigEnv(node, state, endpoint string) ([]string, error) {
	metrics, err := harness.FreeAddr()
	if err != nil {
		return nil, err
	}
	_, port, err := net.SplitHostPort(metrics)
	if err != nil {
		return nil, err
	}
	return []string{
		"OTELCOL_K8S_NODE_ROOT=" + node, "OTELCOL_K8S_STATE=" + state,
		"OTELCOL_K8S_CLOUDWATCH=" + endpoint, "OTELCOL_K8S_HEALTH=127.0.0.1:0",
		"OTELCOL_K8S_METRICS_PORT=" + port,
		"AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench", "AWS_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true",
	}, nil
}

// shippedRun writes the DaemonSet's configuration for one run (node root, state directory,
// endpoint, health address and the port of the collector's own metrics swapped,
// harness.LoadShippedNodeConfig) and returns its path, the environment the DaemonSet gives the
// container plus what the pod's fields would, and the health address.
func shippedRun(dir, node, state, endpoint string, p pipeline, tag string) (config string, env []string, health string, err error) {
	name := p.Name
	if err := os.MkdirAll(filepath.Join(node, "var/log"), 0o755); err != nil {
		return "", nil, "", err
	}
	if health, err = harness.FreeAddr(); err != nil {
		return "", nil, "", err
	}
	metrics, err := harness.FreeAddr()
	if err != nil {
		return "", nil, "", err
	}
	vals, err := harness.ShippedNodeEnv(harness.ShippedNodeDaemonSet)
	if err != nil {
		return "", nil, "", err
	}
	vals["K8S_NODE_NAME"] = "node-1"
	shipped, err := harness.LoadShippedNodeConfig(harness.ShippedNodeConfigMap, harness.Local{
		NodeRoot: node, StateDir: state, Endpoint: endpoint, HealthAddr: health, MetricsAddr: metrics, Env: vals,
	})
	if err != nil {
		return "", nil, "", err
	}
	if p.QueueStorage != "" {
		if err := shipped.SetQueueStorage(p.QueueStorage, state); err != nil {
			return "", nil, "", err
		}
	}
	if p.MessageFormat != "" {
		if err := shipped.SetMessageFormat(p.MessageFormat); err != nil {
			return "", nil, "", err
		}
	}
	if strings.HasSuffix(tag, "-1") {
		for _, c := range shipped.Changes {
			fmt.Fprintf(os.Stderr, "%s: shipped configuration, local change: %s\n", name, c)
		}
	}
	if heapProfiles != "" && strings.HasPrefix(name, "otelcol-k8s") {
		if shipped.YAML, pprofAddr, err = withPprof(shipped.YAML); err != nil {
			return "", nil, "", err
		}
	}
	config = filepath.Join(dir, "shipped-"+tag+".yaml")
	if err := os.WriteFile(config, shipped.YAML, 0o600); err != nil {
		return "", nil, "", err
	}
	env = append(slices.Clip(shipped.Env), "AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench", "AWS_EC2_METADATA_DISABLED=true")
	return config, env, health, nil
}

// listed returns the non-empty items of a comma-separated flag value, trimmed.
func listed(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

func summarize(results []result, pipes []pipeline) {
	type agg struct{ eps, rss, anon, file, cpm, secs, events, msgB, msgMiBs []float64 }
	by := map[string]*agg{}
	for _, r := range results {
		a := by[r.Pipeline]
		if a == nil {
			a = &agg{}
			by[r.Pipeline] = a
		}
		a.eps = append(a.eps, r.EventsPerCPUs)
		a.rss = append(a.rss, r.PeakRSSMiB)
		a.anon = append(a.anon, r.PeakAnonMiB)
		a.file = append(a.file, r.PeakFileMiB)
		a.cpm = append(a.cpm, r.CallsPerMiB)
		a.secs = append(a.secs, r.Seconds)
		a.events = append(a.events, float64(r.Events))
		a.msgB = append(a.msgB, r.MessageBytesPerEvent)
		a.msgMiBs = append(a.msgMiBs, r.MessageMiBPerCPUs)
	}
	fmt.Println()
	fmt.Println("| pipeline | events stored (median) | events per CPU-second | message bytes per event | message MiB per CPU-second | peak RSS MiB | peak RssAnon MiB | peak RssFile MiB | PutLogEvents calls per MiB | seconds to last event |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range pipes {
		a := by[p.Name]
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %.1f | %.0f | %.0f | %.0f | %.2f | %.1f |\n", p.Name, median(a.events), median(a.eps),
			median(a.msgB), median(a.msgMiBs), median(a.rss), median(a.anon), median(a.file), median(a.cpm), median(a.secs))
	}
	base := "upstream"
	if by[fluentBitName] != nil {
		base = fluentBitName
	}
	u := by[base]
	if u == nil || median(u.eps) == 0 || median(u.rss) == 0 || median(u.anon) == 0 || median(u.cpm) == 0 {
		return
	}
	fmt.Println()
	for _, p := range pipes {
		if o := by[p.Name]; p.Name != base && o != nil {
			fmt.Printf("ratios %s / %s: events per CPU-second %.2fx, message bytes per event %.2fx, message MiB per CPU-second %.2fx, peak RSS %.2fx, peak RssAnon %.2fx, peak RssFile %.2fx, PutLogEvents calls per MiB %.2fx\n",
				p.Name, base, median(o.eps)/median(u.eps), median(o.msgB)/median(u.msgB), median(o.msgMiBs)/median(u.msgMiBs),
				median(o.rss)/median(u.rss), median(o.anon)/median(u.anon), median(o.file)/median(u.file), median(o.cpm)/median(u.cpm))
		}
	}
}
