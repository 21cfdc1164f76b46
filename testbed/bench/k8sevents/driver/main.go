// SPDX-License-Identifier: Apache-2.0

// Command driver runs the Events benchmark (testbed/bench/k8sevents.sh): one local API server
// (bin/kube-local), kube_events and contrib's k8s_events each in its own process watching it at
// the same time, and a writer creating Events through client-go. It measures, for both:
//
//   - Events per CPU-second while -events singleton Events are created (raw creates about
//     -objects Pods, 8 writers), from /proc/<pid>/stat;
//   - peak RSS (VmHWM) while streaming and after a restart with 10,000 and -events live Events;
//   - duplicates and losses after each restart (graceful, with Events written while stopped)
//     and after a relist: every watch cut by a proxy in front of the API server and held off
//     (429) until etcd compacted its resource version, so it resumes into 410 Gone (the server
//     runs without watch cache, compacting every second);
//   - the records a 1-hour CrashLoop series makes: the legacy recorder's create and count
//     PATCHes (-crashloop-writes, one per 10 s of the hour), written 60 times faster; kube_events
//     runs with its series timers 60 times shorter (its runner's -compressed).
//
// It prints a Markdown table and the same numbers as JSON.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
)

var (
	kubeBin   = flag.String("kube-bin", "", "bin/kube-local (required)")
	oursBin   = flag.String("ours", "", "the kube_events runner (required)")
	upBin     = flag.String("upstream", "", "the contrib k8s_events runner (required)")
	nEvents   = flag.Int("events", 100000, "singleton Events created")
	nObjects  = flag.Int("objects", 1000, "Pods they are about")
	firstStop = flag.Int("restart-at", 10000, "live Events at the first restart")
	gap       = flag.Int("gap", 200, "Events written while the receivers are stopped, at each restart")
	crashN    = flag.Int("crashloop-writes", 360, "writes of the CrashLoop series: a create and count PATCHes, one per 10 s of an hour")
	relistAt  = flag.Int("relist-at", 5000, "live Events when the watches are cut into 410 Gone")
	jsonOut   = flag.String("json", "", "also write the results here")
	profiles  = flag.String("cpuprofiles", "", "directory for a CPU profile of every receiver process")
	oursEnv   = flag.String("ours-env-from", "", "a Deployment manifest whose Go runtime variables (GOMAXPROCS, GOMEMLIMIT) kube_events runs with: the shipped events Deployment")
	upEnv     = flag.String("upstream-env", "", "comma-separated NAME=value pairs k8s_events runs with (GOMAXPROCS=1 for the same runtime setting as kube_events)")
)

func main() {
	flag.Parse()
	if *kubeBin == "" || *oursBin == "" || *upBin == "" {
		fmt.Fprintln(os.Stderr, "-kube-bin, -ours and -upstream are required")
		os.Exit(2)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		os.Exit(1)
	}
}

// proc is one running receiver.
type proc struct {
	cmd     *exec.Cmd
	records string
	exited  chan error
}

// receiver is one of the two receivers and its successive processes.
type receiver struct {
	name, bin string
	args      []string
	env       []string // NAME=value added to the driver's environment
	dir       string
	runs      int
	cur       *proc
	files     []string
}

func (r *receiver) start() error {
	r.runs++
	rec := filepath.Join(r.dir, fmt.Sprintf("%s-%d.tsv", r.name, r.runs))
	args := append([]string{"-records", rec, "-identity", fmt.Sprintf("%s-%d", r.name, r.runs)}, r.args...)
	if *profiles != "" {
		args = append(args, "-cpuprofile", filepath.Join(*profiles, fmt.Sprintf("%s-%d.pprof", r.name, r.runs)))
	}
	cmd := exec.Command(r.bin, args...) //nolint:gosec // the benchmark's own binaries
	cmd.Env = append(os.Environ(), r.env...)
	logf, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("%s-%d.log", r.name, r.runs)))
	if err != nil {
		return err
	}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	running := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "running" {
				close(running)
			}
		}
	}()
	p := &proc{cmd: cmd, records: rec, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait(); _ = logf.Close() }()
	select {
	case <-running:
	case err := <-p.exited:
		return fmt.Errorf("%s exited at start: %w (log in %s)", r.name, err, logf.Name())
	case <-time.After(time.Minute):
		return fmt.Errorf("%s did not start", r.name)
	}
	r.cur = p
	r.files = append(r.files, rec)
	return nil
}

// stop sends SIGTERM and waits for the process to flush its records and exit.
func (r *receiver) stop() error {
	if r.cur == nil {
		return nil
	}
	_ = r.cur.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.cur.exited:
		r.cur = nil
		return err
	case <-time.After(2 * time.Minute):
		_ = r.cur.cmd.Process.Kill()
		return fmt.Errorf("%s did not stop", r.name)
	}
}

func (r *receiver) pid() int { return r.cur.cmd.Process.Pid }

// record is one line of a records file.
type record struct {
	uid   string
	count int
	state string
}

// records reads what every process of r has emitted so far, by run.
func (r *receiver) records() ([][]record, error) {
	out := make([][]record, len(r.files))
	for i, f := range r.files {
		b, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			fs := strings.Split(line, "\t")
			if len(fs) != 3 {
				continue
			}
			n, _ := strconv.Atoi(fs[1])
			out[i] = append(out[i], record{uid: fs[0], count: n, state: fs[2]})
		}
	}
	return out, nil
}

// seen returns the uids r has emitted a record for.
func (r *receiver) seen() (map[string]bool, error) {
	runs, err := r.records()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, run := range runs {
		for _, rec := range run {
			out[rec.uid] = true
		}
	}
	return out, nil
}

// duplicates counts records repeated across all runs of r (same Event, count and state).
func (r *receiver) duplicates() (int, error) {
	runs, err := r.records()
	if err != nil {
		return 0, err
	}
	seen := map[record]bool{}
	dups := 0
	for _, run := range runs {
		for _, rec := range run {
			if seen[rec] {
				dups++
			}
			seen[rec] = true
		}
	}
	return dups, nil
}

// peakRSS is VmHWM in KiB.
func peakRSS(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return kb
		}
	}
	return 0
}

// cpuSeconds is a process's user and system time (100 clock ticks per second).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return float64(u+s) / 100
}

// startCluster runs kube-local and returns its kubeconfig and a stop function.
func startCluster(dir string, flags ...string) (string, func(), error) {
	kc := filepath.Join(dir, "kubeconfig")
	cmd := exec.Command(*kubeBin, append([]string{"-kubeconfig", kc}, flags...)...) //nolint:gosec // the benchmark's own binary
	logf, err := os.Create(filepath.Join(dir, "kube-local.log"))
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready ") {
				close(ready)
			}
		}
	}()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
		_ = logf.Close()
	}
	select {
	case <-ready:
		return kc, stop, nil
	case <-time.After(2 * time.Minute):
		stop()
		return "", nil, errors.New("kube-local not ready")
	}
}

type bench struct {
	ctx    context.Context
	client kubernetes.Interface
	proxy  *kubecluster.Proxy // the receivers reach the API server through it
	recvs  []*receiver
	seq    int
}

// waitAll waits until every receiver has emitted a record for each uid.
func (b *bench) waitAll(what string, uids []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		missing := ""
		for _, r := range b.recvs {
			seen, err := r.seen()
			if err != nil {
				return err
			}
			for _, u := range uids {
				if !seen[u] {
					missing = r.name
					break
				}
			}
			if missing != "" {
				break
			}
		}
		if missing == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %s has not emitted every record after %s", what, missing, timeout)
		}
		time.Sleep(200 * time.Millisecond) //nolint:forbidigo // polling files another process writes
	}
}

// create writes one singleton Event about object obj and returns its uid.
func (b *bench) create(obj int, reason string) (string, error) {
	b.seq++
	return b.createNamed(fmt.Sprintf("web-%d.%s-%d", obj, strings.ToLower(reason), b.seq), obj, reason)
}

func (b *bench) createNamed(name string, obj int, reason string) (string, error) {
	ev, err := b.client.EventsV1().Events("default").Create(b.ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		EventTime:  metav1.NewMicroTime(time.Now()), ReportingController: "bench/controller", ReportingInstance: "bench-1",
		Action: "Probe", Reason: reason, Type: corev1.EventTypeNormal, Note: "probe of " + name,
		Regarding: corev1.ObjectReference{
			Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: fmt.Sprintf("web-%d", obj),
			UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", obj)),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return string(ev.UID), nil
}

// createMany writes Events from..to-1 with 8 writers and returns their uids.
func (b *bench) createMany(from, to int) ([]string, error) {
	jobs := make(chan int)
	var mu sync.Mutex
	var uids []string
	var firstErr error
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range jobs {
				uid, err := b.createNamed(fmt.Sprintf("web-%d.%d", i%*nObjects, i), i%*nObjects, fmt.Sprintf("Check%d", i%7))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				uids = append(uids, uid)
				mu.Unlock()
			}
		})
	}
	for i := from; i < to; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return uids, firstErr
}

// ready waits until every receiver watches: probes are written until each has emitted one (a
// receiver's first list emits nothing for what it finds).
func (b *bench) ready() error {
	deadline := time.Now().Add(3 * time.Minute)
	var probes []string
	for time.Now().Before(deadline) {
		uid, err := b.create(0, "Probe")
		if err != nil {
			return err
		}
		probes = append(probes, uid)
		all := true
		for _, r := range b.recvs {
			seen, err := r.seen()
			if err != nil {
				return err
			}
			any := false
			for _, p := range probes {
				any = any || seen[p]
			}
			all = all && any
		}
		if all {
			return nil
		}
		time.Sleep(2 * time.Second) //nolint:forbidigo // a probe every 2s until both watch
	}
	return errors.New("the receivers do not watch")
}

// restart stops every receiver, writes gap Events, starts them again and waits until they
// caught up (a marker Event written after the start emitted by both). It reports each
// receiver's peak RSS, the gap Events it lost and the records it repeated.
func (b *bench) restart(label string, res *results) error {
	before, err := b.repeated()
	if err != nil {
		return err
	}
	for _, r := range b.recvs {
		if err := r.stop(); err != nil {
			return err
		}
	}
	gapUIDs, err := b.writeGap()
	if err != nil {
		return err
	}
	for _, r := range b.recvs {
		if err := r.start(); err != nil {
			return err
		}
	}
	if err := b.caughtUp(label); err != nil {
		return err
	}
	for _, r := range b.recvs {
		res.add(r.name, label+": peak RSS (KiB)", float64(peakRSS(r.pid())))
	}
	return b.account(label, gapUIDs, before, res)
}

// repeated is each receiver's repeated records so far.
func (b *bench) repeated() (map[string]int, error) {
	out := map[string]int{}
	for _, r := range b.recvs {
		n, err := r.duplicates()
		if err != nil {
			return nil, err
		}
		out[r.name] = n
	}
	return out, nil
}

// writeGap writes -gap Events (while the receivers are stopped or cut off).
func (b *bench) writeGap() ([]string, error) {
	uids := make([]string, 0, *gap)
	for range *gap {
		uid, err := b.create(1, "Gap")
		if err != nil {
			return nil, err
		}
		uids = append(uids, uid)
	}
	return uids, nil
}

// caughtUp writes a marker Event and waits until every receiver emitted it.
func (b *bench) caughtUp(label string) error {
	marker, err := b.create(2, "Marker")
	if err != nil {
		return err
	}
	return b.waitAll(label+": marker", []string{marker}, 15*time.Minute)
}

// relist cuts every watch and answers every request 429 until etcd compacted past the
// resource versions the watches would resume from; Events are written meanwhile. Then every
// receiver must emit a marker; it reports duplicates and losses.
func (b *bench) relist(label string, res *results) error {
	before, err := b.repeated()
	if err != nil {
		return err
	}
	b.proxy.Throttle(1<<30, 1)
	b.proxy.DropWatches()
	gapUIDs, err := b.writeGap()
	if err != nil {
		return err
	}
	// Compaction runs every second; the newest resource version must be compacted too, so
	// wait for three cycles after the last write.
	time.Sleep(3 * time.Second) //nolint:forbidigo // waiting for etcd's compaction timer
	b.proxy.Throttle(0, 0)
	if err := b.caughtUp(label); err != nil {
		return err
	}
	return b.account(label, gapUIDs, before, res)
}

// account reports, for each receiver, the Events of uids it never emitted and the records it
// repeated since before.
func (b *bench) account(label string, uids []string, before map[string]int, res *results) error {
	for _, r := range b.recvs {
		seen, err := r.seen()
		if err != nil {
			return err
		}
		lost := 0
		for _, u := range uids {
			if !seen[u] {
				lost++
			}
		}
		dups, err := r.duplicates()
		if err != nil {
			return err
		}
		res.add(r.name, label+fmt.Sprintf(": Events written meanwhile never emitted (of %d)", len(uids)), float64(lost))
		res.add(r.name, label+": records repeated", float64(dups-before[r.name]))
	}
	return nil
}

// results holds one value per receiver and measure, in the order they were added.
type results struct {
	order  []string
	values map[string]map[string]float64
}

func (r *results) add(recv, measure string, v float64) {
	if r.values == nil {
		r.values = map[string]map[string]float64{}
	}
	if _, ok := r.values[measure]; !ok {
		r.order = append(r.order, measure)
		r.values[measure] = map[string]float64{}
	}
	r.values[measure][recv] = v
	fmt.Fprintf(os.Stderr, "%s %s: %.2f\n", recv, measure, v)
}

// setup starts an API server with flags, the proxy in front of it and both receivers in dir,
// and waits until both watch; stop ends all of it.
func setup(dir string, flags ...string) (b *bench, stop func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	kc, stopCluster, err := startCluster(dir, flags...)
	if err != nil {
		return nil, nil, err
	}
	stops = append(stops, stopCluster)
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		return nil, nil, err
	}
	rc.QPS, rc.Burst = 5000, 5000
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	proxy, stopProxy, err := kubecluster.ServeProxy(rc.Host, rc.CAData, rc.BearerToken, filepath.Join(dir, "proxy-kubeconfig"))
	if err != nil {
		return nil, nil, err
	}
	stops = append(stops, func() { _ = stopProxy() })
	b = &bench{ctx: context.Background(), client: client, proxy: proxy}
	ours, err := runtimeEnv(*oursEnv)
	if err != nil {
		return nil, nil, err
	}
	var up []string
	if *upEnv != "" {
		up = strings.Split(*upEnv, ",")
	}
	fmt.Fprintf(os.Stderr, "kube_events runs with %v, k8s_events with %v\n", ours, up)
	b.recvs = []*receiver{
		{name: "kube_events", bin: *oursBin, args: []string{"-kubeconfig", proxy.Kubeconfig, "-compressed"}, env: ours, dir: dir},
		{name: "k8s_events", bin: *upBin, args: []string{"-kubeconfig", proxy.Kubeconfig}, env: up, dir: dir},
	}
	stops = append(stops, func() {
		for _, r := range b.recvs {
			_ = r.stop()
		}
	})
	for _, r := range b.recvs {
		if err := r.start(); err != nil {
			return nil, nil, err
		}
	}
	return b, stop, b.ready()
}

func run() error {
	dir, err := os.MkdirTemp("", "eventsbench")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	var res results

	// The relist: its own server, without watch cache and compacting every second, so a watch
	// resumed after a cut gets 410 Gone. (Not for the rest: a paged relist slower than the
	// compaction interval has its continue token expire, see BENCHMARKS.md.)
	if *relistAt > 0 {
		b, stop, err := setup(filepath.Join(dir, "relist"), "-watch-cache=false", "-etcd-compaction-interval=1s")
		if err != nil {
			return err
		}
		uids, err := b.createMany(0, *relistAt)
		if err == nil {
			err = b.waitAll("Events before the relist", uids, 10*time.Minute)
		}
		if err == nil {
			err = b.relist(fmt.Sprintf("410 Gone with %d live Events", *relistAt), &res)
		}
		stop()
		if err != nil {
			return err
		}
	}

	b, stop, err := setup(filepath.Join(dir, "main"))
	if err != nil {
		return err
	}
	defer stop()
	// Streaming: the first -restart-at Events, then the rest; CPU over the whole stream (the
	// processes of the second part are the restarted ones).
	cpu := map[string]float64{}
	stream := func(from, to int) error {
		before := map[string]float64{}
		for _, r := range b.recvs {
			before[r.name] = cpuSeconds(r.pid())
		}
		uids, err := b.createMany(from, to)
		if err != nil {
			return err
		}
		if err := b.waitAll(fmt.Sprintf("Events %d-%d", from, to), uids, 20*time.Minute); err != nil {
			return err
		}
		for _, r := range b.recvs {
			cpu[r.name] += cpuSeconds(r.pid()) - before[r.name]
			res.add(r.name, fmt.Sprintf("streaming, %d live Events: peak RSS (KiB)", to), float64(peakRSS(r.pid())))
		}
		return nil
	}
	if err := stream(0, *firstStop); err != nil {
		return err
	}
	if err := b.restart(fmt.Sprintf("restart with %d live Events", *firstStop), &res); err != nil {
		return err
	}
	if err := stream(*firstStop, *nEvents); err != nil {
		return err
	}
	for _, r := range b.recvs {
		res.add(r.name, fmt.Sprintf("Events per CPU-second (%d Events)", *nEvents), float64(*nEvents)/cpu[r.name])
	}
	if err := b.restart(fmt.Sprintf("restart with %d live Events", *nEvents+*gap+2), &res); err != nil {
		return err
	}
	if err := b.crashLoop(&res); err != nil {
		return err
	}
	printResults(&res, b.recvs[0].name, b.recvs[1].name)
	if *jsonOut != "" {
		out, _ := json.MarshalIndent(res.values, "", "  ")
		if err := os.WriteFile(*jsonOut, out, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// crashLoop writes a legacy (tools/record) CrashLoop series the way the recorder does: a core/v1
// Event with count 1, then a PATCH of count, lastTimestamp and message per occurrence, one per
// 10 s of the hour written every 10s/60; it waits until kube_events finished the series and
// counts each receiver's records of it.
func (b *bench) crashLoop(res *results) error {
	now := metav1.NewTime(time.Now())
	ev, err := b.client.CoreV1().Events("default").Create(b.ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "crash-0.backoff", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "crash-0", UID: "00000000-0000-4000-8000-0000000c4a50"},
		Reason:         "BackOff", Message: "Back-off restarting failed container app in pod crash-0",
		Source: corev1.EventSource{Component: "kubelet", Host: "node-1"}, Type: corev1.EventTypeWarning,
		Count: 1, FirstTimestamp: now, LastTimestamp: now,
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	tick := time.NewTicker(10 * time.Second / 60)
	defer tick.Stop()
	for i := 2; i <= *crashN; i++ {
		<-tick.C
		patch := fmt.Sprintf(`{"count":%d,"lastTimestamp":%q,"message":"Back-off restarting failed container app in pod crash-0"}`,
			i, time.Now().UTC().Format(time.RFC3339))
		if _, err := b.client.CoreV1().Events("default").Patch(b.ctx, ev.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		runs, err := b.recvs[0].records()
		if err != nil {
			return err
		}
		finished := false
		for _, rec := range runs[len(runs)-1] {
			finished = finished || (rec.uid == string(ev.UID) && rec.state == "finished")
		}
		if finished {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("kube_events did not finish the CrashLoop series")
		}
		time.Sleep(200 * time.Millisecond) //nolint:forbidigo // polling a file another process writes
	}
	for _, r := range b.recvs {
		runs, err := r.records()
		if err != nil {
			return err
		}
		n := 0
		var states []string
		for _, rec := range runs[len(runs)-1] {
			if rec.uid == string(ev.UID) {
				n++
				if rec.state != "-" {
					states = append(states, rec.state)
				}
			}
		}
		res.add(r.name, fmt.Sprintf("records of a 1-hour CrashLoop series (%d writes)", *crashN), float64(n))
		if len(states) > 0 {
			fmt.Fprintf(os.Stderr, "%s CrashLoop states: %s\n", r.name, strings.Join(states, ", "))
		}
	}
	return nil
}

func printResults(res *results, ours, up string) {
	fmt.Printf("| measure | %s | %s | ratio |\n|---|---|---|---|\n", ours, up)
	for _, m := range res.order {
		a, c := res.values[m][ours], res.values[m][up]
		ratio := "-"
		if c != 0 {
			ratio = fmt.Sprintf("%.2fx", a/c)
		}
		fmt.Printf("| %s | %s | %s | %s |\n", m, num(a), num(c), ratio)
	}
}

func num(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// runtimeEnv returns the Go runtime variables (GO...) the one container of the Deployment at
// path sets as literal values, as NAME=value; none when path is empty.
func runtimeEnv(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(raw, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if d.Kind != "Deployment" || len(d.Spec.Template.Spec.Containers) != 1 {
		return nil, fmt.Errorf("%s: not a Deployment with one container", path)
	}
	var env []string
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if strings.HasPrefix(e.Name, "GO") && e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return env, nil
}
