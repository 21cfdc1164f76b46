// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	binenc "encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

var eventObjects = flag.Int("e2e.events.objects", 30, "objects the simulated controller reports on in TestEventsLeaderKilled (each: 3 Events, up to 9 records)")

// eventsSeries compresses the legacy series timers of TestEventsLeaderKilled: a legacy series
// finishes after 60s without an occurrence instead of 15 minutes (well above the failover's ~20s, so
// a series does not finish while nobody leads), and an occurrence 5s after the last ongoing one
// is ongoing again (instead of 30 minutes).
var eventsSeries = map[string]any{"finish_after": "60s", "ongoing_interval": "5s"}

// eventsConfigMapPath is the shipped events collector configuration, from this directory.
// It is the traces set's (the chart with traces.enabled): the scenarios count spans too.
const eventsConfigMapPath = "../../" + harness.ShippedTracesEventsConfigMap

// traceSink is a local OTLP/HTTP traces endpoint counting spans by Event uid and state, the
// scenario's Events' only (not the API server's own: kubecluster.FromAPIServer).
type traceSink struct {
	mu    sync.Mutex
	spans map[string]int
}

func (s *traceSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(raw); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	rss := req.Traces().ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		for j := 0; j < rss.At(i).ScopeSpans().Len(); j++ {
			spans := rss.At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				a := spans.At(k).Attributes()
				if rc, _ := a.Get("otelcol_k8s.event.reporting_controller"); kubecluster.FromAPIServer(rc.AsString()) {
					continue // not the scenario's Event
				}
				uid, _ := a.Get("otelcol_k8s.event.uid")
				st, _ := a.Get("otelcol_k8s.event.series.state")
				s.spans[uid.AsString()+" "+st.AsString()]++
			}
		}
	}
	s.mu.Unlock()
	out, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (s *traceSink) snapshot() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.spans))
	for k, v := range s.spans {
		out[k] = v
	}
	return out
}

// eventRecords counts the records stored in every group of the local server by "uid state",
// by "reason state" and by stream name, the scenario's Events' only (as traceSink).
func eventRecords(t *testing.T, srv *localcloudwatch.Server) (byUID, byReason, byStream map[string]int) {
	t.Helper()
	byUID, byReason, byStream = map[string]int{}, map[string]int{}, map[string]int{}
	for _, g := range srv.Groups() {
		streams, err := srv.Streams(g.Name)
		if err != nil {
			continue
		}
		for _, st := range streams {
			evs, err := srv.Events(g.Name, st.Name)
			if err != nil {
				continue
			}
			for _, ev := range evs {
				var m struct {
					Attributes map[string]any `json:"attributes"`
				}
				if err := json.Unmarshal([]byte(ev.Message), &m); err != nil {
					t.Fatalf("a stored message is not JSON: %v: %s", err, ev.Message)
				}
				if rc, _ := m.Attributes["otelcol_k8s.event.reporting_controller"].(string); kubecluster.FromAPIServer(rc) {
					continue // not the scenario's Event
				}
				uid, _ := m.Attributes["otelcol_k8s.event.uid"].(string)
				state, _ := m.Attributes["otelcol_k8s.event.series.state"].(string)
				reason, _ := m.Attributes["otelcol_k8s.event.reason"].(string)
				byUID[uid+" "+state]++
				byReason[reason+" "+state]++
				byStream[st.Name]++
			}
		}
	}
	return byUID, byReason, byStream
}

// peakRSS is a process's peak resident set (VmHWM) in KiB, 0 when unknown.
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

// cpuSeconds is the user and system CPU time a process has used (/proc/<pid>/stat, at the
// usual 100 clock ticks per second), 0 when unknown.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count fields after its closing parenthesis.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return float64(utime+stime) / 100
}

// TestEventsLeaderKilled: a simulated controller writes Events through client-go's recorders
// (tools/events: a singleton and a series per object; tools/record: a legacy series per object)
// into the local API server; two collector replicas run the shipped events configuration (only
// endpoints swapped, and the legacy series timers compressed) with leader election on one
// Lease; the leader is killed with SIGKILL while Events are being written and replaced by a new
// pod; the standby takes over from the checkpoint. Every series then gets its heartbeat (new
// recorder, driven by hand) or one more occurrence (legacy): ongoing. The leader is then stopped
// gracefully and the third replica takes over; the series' final writes (the new recorder's,
// driven by hand) and the legacy series' silence finish every series. In the local CloudWatch
// Logs server every Event and series state is counted: none twice, every state once, each in
// the stream the shipped scheme names; in the local traces endpoint every span once.
func TestEventsLeaderKilled(t *testing.T) {
	t.Parallel() // its own API server, servers and ports: it shares the e2e suite's second slot
	bin := binary(t)
	cluster := kubecluster.Start(t)
	client := harness.KubeClient(t, cluster.Kubeconfig, 500, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()

	srv := localcloudwatch.New(localcloudwatch.Config{})
	endpoint, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	sink := &traceSink{spans: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	traceSrv := &http.Server{Handler: sink, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = traceSrv.Serve(ln) }()
	defer func() { _ = traceSrv.Close() }()

	replicas := map[string]*harness.Collector{}
	start := func(name string) {
		t.Helper()
		replicas[name] = startEventsCollector(t, bin, dir, name, cluster.Kubeconfig, endpoint, ln.Addr().String(), eventsSeries, len(replicas) == 0)
	}
	logOf := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name+".log"))
		return string(b)
	}
	// holder is the Lease's holder once the named replica watches (its checkpoint exists).
	holder := func() string {
		l, err := client.CoordinationV1().Leases("default").Get(ctx, "otelcol-k8s-events", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		if _, err := client.CoreV1().ConfigMaps("default").Get(ctx, "otelcol-k8s-events-checkpoint", metav1.GetOptions{}); err != nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	waitFor := func(what string, timeout time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s\nreplica a:\n%s\nreplica b:\n%s", what, timeout, tail(logOf("events-a")), tail(logOf("events-b")))
			}
			<-tick.C
		}
	}
	started := time.Now()
	start("events-a")
	waitFor("replica a leads", 90*time.Second, func() bool { return holder() == "events-a" })
	start("events-b")

	// The simulated controller.
	nb := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	if err := nb.StartRecordingToSinkWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	defer nb.Shutdown()
	newRec := nb.NewRecorder(scheme.Scheme, "e2e/controller")
	lb := record.NewBroadcaster()
	lb.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	defer lb.Shutdown()
	legacyRec := lb.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: "node-1"})
	n := *eventObjects
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("web-%d", i), UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))},
		}
	}
	// The new recorder records each occurrence in a goroutine of its own: a second occurrence
	// right after the first may PATCH the series before the first is created, find nothing and
	// create the Event at count 2 itself, and the API then never shows count 1 (no singleton to
	// report). The second occurrence waits until the first is in the API, as it would be with
	// the seconds between a real container's back-offs.
	created := func(p *corev1.Pod, reason string) {
		t.Helper()
		sel := fmt.Sprintf("involvedObject.name=%s,reason=%s", p.Name, reason)
		deadline := time.Now().Add(30 * time.Second)
		for {
			l, err := client.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
			if err == nil && len(l.Items) > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the first %s Event of %s is not in the API after 30s (%v)", reason, p.Name, err)
			}
			time.Sleep(20 * time.Millisecond) // polling the API: the recorder gives no signal
		}
	}
	write := func(p *corev1.Pod) {
		newRec.Eventf(p, nil, corev1.EventTypeNormal, "Scheduled", "Bind", "Successfully assigned "+p.Name)
		newRec.Eventf(p, nil, corev1.EventTypeWarning, "BackOff", "Restart", "Back-off restarting failed container")
		created(p, "BackOff")
		newRec.Eventf(p, nil, corev1.EventTypeWarning, "BackOff", "Restart", "Back-off restarting failed container")
		for range 3 {
			legacyRec.Event(p, corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed")
		}
	}
	// The first half while events-a leads; once its records are stored, kill -9 of the leader
	// (no graceful checkpoint save, no Lease release), then the second half while nobody leads.
	// The kill waits for the first half's records: a kill while a batch is in flight may repeat
	// that batch (design.md rule 8), which this scenario does not count.
	half := n / 2
	for _, p := range pods[:half] {
		write(p)
	}
	waitFor("the first half's records", 60*time.Second, func() bool {
		_, byReason, _ := eventRecords(t, srv)
		return byReason["Scheduled singleton"] == half && byReason["BackOff start"] == half && byReason["Unhealthy start"] == half
	})
	// ... and the checkpoint past the last write (the recorders may still be PATCHing counts).
	waitFor("the checkpoint past every Event", 60*time.Second, func() bool {
		l, err := client.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		latest := 0
		for _, e := range l.Items {
			latest = max(latest, atoi(e.ResourceVersion))
		}
		cm, err := client.CoreV1().ConfigMaps("default").Get(ctx, "otelcol-k8s-events-checkpoint", metav1.GetOptions{})
		if err != nil {
			return false
		}
		rv, ok := checkpointResourceVersion(cm.BinaryData["checkpoint"])
		return ok && atoi(rv) >= latest
	})
	replicas["events-a"].Kill()
	killedAt := time.Now()
	t.Logf("leader events-a killed (SIGKILL) after %s", killedAt.Sub(started).Round(time.Millisecond))
	for _, p := range pods[half:] {
		write(p)
	}
	waitFor("replica b takes over", 90*time.Second, func() bool { return holder() == "events-b" })
	t.Logf("events-b leads %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	// The Deployment replaces the killed pod: a new pod name, a new identity, now the standby.
	start("events-c")

	// Every series started; then the new recorder's heartbeat of each BackOff series (the PATCH
	// its 30-minute heartbeat writes: the count so far and a fresh lastObservedTime) and one
	// more occurrence of each legacy Unhealthy series, more than ongoing_interval after its
	// first: an ongoing record each.
	waitFor("every BackOff and Unhealthy series started", 120*time.Second, func() bool {
		_, byReason, _ := eventRecords(t, srv)
		return byReason["BackOff start"] >= n && byReason["Unhealthy start"] >= n && byReason["Scheduled singleton"] >= n
	})
	list, err := client.EventsV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "reason=BackOff"})
	if err != nil {
		t.Fatal(err)
	}
	seriesWrite := func(name string, count int, last time.Time) {
		patch := fmt.Sprintf(`{"series":{"count":%d,"lastObservedTime":%q}}`, count, last.UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
		if _, err := client.EventsV1().Events("default").Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range list.Items {
		seriesWrite(e.Name, 5, time.Now())
	}
	for _, p := range pods {
		legacyRec.Event(p, corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed")
	}
	waitFor("every series ongoing", 60*time.Second, func() bool {
		_, byReason, _ := eventRecords(t, srv)
		return byReason["BackOff ongoing"] >= n && byReason["Unhealthy ongoing"] >= n
	})
	// A rolling restart: the leader stops gracefully (its checkpoint saved, the Lease
	// released), the standby takes over; then the new recorder's final write of each BackOff
	// series (lastObservedTime older than its 6-minute finish window), and the legacy series
	// finish by silence (finish_after) under the new leader.
	if err := replicas["events-b"].Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor("replica c takes over", 60*time.Second, func() bool { return holder() == "events-c" })
	for _, e := range list.Items {
		seriesWrite(e.Name, 9, time.Now().Add(-7*time.Minute))
	}
	waitFor("every series finished", 120*time.Second, func() bool {
		_, byReason, _ := eventRecords(t, srv)
		return byReason["BackOff finished"] >= n && byReason["Unhealthy finished"] >= n
	})
	// Nothing more may arrive: watch for duplicates a little longer.
	quietUntil := time.Now().Add(*quiet)
	waitFor("quiet period", *quiet+time.Second, func() bool { return time.Now().After(quietUntil) })

	byUID, byReason, byStream := eventRecords(t, srv)
	for k, c := range byUID {
		if c != 1 {
			t.Errorf("%s stored %d times", k, c)
		}
	}
	// Every state exactly once. A series created and repeated while nobody led is first seen
	// at count 2 by the next leader's relist: its singleton is not emitted (the API no longer
	// shows count 1), so the second half has no singleton of its series (design.md rule 8).
	want := map[string]int{
		"Scheduled singleton": n,
		"BackOff singleton":   half, "BackOff start": n, "BackOff ongoing": n, "BackOff finished": n,
		"Unhealthy singleton": half, "Unhealthy start": n, "Unhealthy ongoing": n, "Unhealthy finished": n,
	}
	if !equalCounts(byReason, want) {
		t.Errorf("records by reason and state:\n got %v\nwant %v", byReason, want)
	}
	// The shipped stream scheme: one stream per regarding kind and reporting controller (the
	// legacy recorder's is its source component).
	wantStreams := map[string]int{"Pod/e2e/controller": 4*n + half, "Pod/kubelet": 3*n + half}
	if !equalCounts(byStream, wantStreams) {
		t.Errorf("records by stream:\n got %v\nwant %v", byStream, wantStreams)
	}
	spans := sink.snapshot()
	spanStates := map[string]int{}
	for k, c := range spans {
		if c != 1 {
			t.Errorf("span %s exported %d times", k, c)
		}
		_, state, _ := strings.Cut(k, " ")
		spanStates[state] += c
	}
	// A span per singleton and per finished series; a singleton that became a series is two.
	if wantSpans := map[string]int{"singleton": n + 2*half, "finished": 2 * n}; !equalCounts(spanStates, wantSpans) {
		t.Errorf("spans by state: got %v, want %v", spanStates, wantSpans)
	}
	t.Logf("%d Events, %d records, %d spans in %s; peak RSS: events-c %d KiB",
		3*n, len(byUID), len(spans), time.Since(started).Round(time.Millisecond), peakRSS(replicas["events-c"].Pid()))
}

// startEventsCollector starts a replica of the events collector named name (its POD_NAME) with
// the shipped events configuration, endpoints swapped for the local API server, CloudWatch
// server and OTLP traces endpoint at traceAddr; logChanges logs the swaps.
func startEventsCollector(t *testing.T, bin, dir, name, kubeconfig, endpoint, traceAddr string, series map[string]any, logChanges bool) *harness.Collector {
	t.Helper()
	return startEventsCollectorMetrics(t, bin, dir, name, kubeconfig, endpoint, traceAddr, "", series, logChanges)
}

// startEventsCollectorMetrics is startEventsCollector with the collector's own metrics served
// at metricsAddr ("" turns them off).
func startEventsCollectorMetrics(t *testing.T, bin, dir, name, kubeconfig, endpoint, traceAddr, metricsAddr string, series map[string]any, logChanges bool) *harness.Collector {
	t.Helper()
	shipped, err := harness.LoadShippedEventsConfig(eventsConfigMapPath, harness.EventsLocal{
		Kubeconfig: kubeconfig, Endpoint: endpoint, Series: series,
		TracesEndpoint: "http://" + traceAddr + "/v1/traces", HealthAddr: freeAddr(t), MetricsAddr: metricsAddr,
		Env: map[string]string{
			"POD_NAME": name, "CLUSTER_NAME": "local", "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_EC2_METADATA_DISABLED": "true",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, shipped.YAML, 0o600); err != nil {
		t.Fatal(err)
	}
	if logChanges {
		for _, c := range shipped.Changes {
			t.Logf("shipped events configuration, local change: %s", c)
		}
	}
	logPath := filepath.Join(dir, name+".log")
	col, err := harness.StartCollector(bin, path, shipped.Env, logPath)
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-registered first: the log is shown once the collector has exited.
	t.Cleanup(func() { showLogIfFailed(t, logPath, name+".log") })
	t.Cleanup(func() { col.Kill() })
	return col
}

// atoi reads an etcd-backed resource version (a decimal number); 0 when it is not one.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func tail(s string) string {
	const max = 4000
	if len(s) > max {
		return s[len(s)-max:]
	}
	return s
}

var (
	scaleEvents  = flag.Int("e2e.events.scale", 2000, "Events TestEventsAtScale creates (the issue's size: 100000)")
	scaleObjects = flag.Int("e2e.events.scale_objects", 100, "objects they are about (the issue's size: 1000)")
)

// TestEventsAtScale: one collector with the shipped events configuration while a writer creates
// -e2e.events.scale singleton Events about -e2e.events.scale_objects Pods (8 writers, raw creates
// through client-go): throughput (Events stored per second of the run) and the collector's peak
// RSS are logged. Then a restart on the same checkpoint relists every live Event (paged): its
// peak RSS is logged and not one record may repeat. CI runs the small default; the size
// is `E2E_ARGS='-run TestEventsAtScale -e2e.events.scale=100000 -e2e.events.scale_objects=1000'`.
func TestEventsAtScale(t *testing.T) {
	bin := binary(t)
	cluster := kubecluster.StartWith(t, "-watch-cache=false")
	client := harness.KubeClient(t, cluster.Kubeconfig, 5000, 5000)
	ctx := context.Background()
	dir := t.TempDir()
	srv := localcloudwatch.New(localcloudwatch.Config{})
	endpoint, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	traceSrv := &http.Server{Handler: &traceSink{spans: map[string]int{}}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = traceSrv.Serve(ln) }()
	defer func() { _ = traceSrv.Close() }()
	start := func(name string) *harness.Collector {
		return startEventsCollector(t, bin, dir, name, cluster.Kubeconfig, endpoint, ln.Addr().String(), nil, false)
	}
	stored := func() int { // the server's count: cheap enough to poll at 100,000
		total := 0
		for _, g := range srv.Groups() {
			total += int(g.Events)
		}
		return total
	}
	checkpointed := func() bool {
		_, err := client.CoreV1().ConfigMaps("default").Get(ctx, "otelcol-k8s-events-checkpoint", metav1.GetOptions{})
		return err == nil
	}
	waitUntil := func(what string, timeout time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s", what, timeout)
			}
			time.Sleep(200 * time.Millisecond) //nolint:forbidigo // polling a condition
		}
	}
	col := start("events-1")
	waitUntil("the collector watches", 90*time.Second, checkpointed)

	n, objects := *scaleEvents, *scaleObjects
	cpuBefore := cpuSeconds(col.Pid())
	began := time.Now()
	jobs := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				obj := i % objects
				_, err := client.EventsV1().Events("default").Create(ctx, &eventsv1.Event{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d.%d", obj, i), Namespace: "default"},
					EventTime:  metav1.NewMicroTime(time.Now()), ReportingController: "e2e/scale", ReportingInstance: "scale-1",
					Action: "Probe", Reason: fmt.Sprintf("Check%d", i%7), Type: corev1.EventTypeNormal, Note: "probe " + strconv.Itoa(i),
					Regarding: corev1.ObjectReference{
						Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: fmt.Sprintf("web-%d", obj),
						UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", obj)),
					},
				}, metav1.CreateOptions{})
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	written := time.Since(began)
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	waitUntil("every Event stored", 20*time.Minute, func() bool { return stored() >= n })
	elapsed := time.Since(began)
	cpu := cpuSeconds(col.Pid()) - cpuBefore
	t.Logf("%d Events about %d objects: written in %s, all stored after %s (%.0f Events/s end to end); collector CPU %.2fs (%.0f Events per CPU-second); peak RSS %d KiB",
		n, objects, written.Round(time.Millisecond), elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), cpu, float64(n)/cpu, peakRSS(col.Pid()))
	if err := col.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}

	// Restart on the checkpoint: a paged relist of every live Event, nothing emitted again.
	relisted := time.Now()
	col = start("events-2")
	waitUntil("the restarted collector leads", 90*time.Second, func() bool {
		l, err := client.CoordinationV1().Leases("default").Get(ctx, "otelcol-k8s-events", metav1.GetOptions{})
		return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "events-2"
	})
	// A marker written after the restart: once stored, the relist is behind us.
	_, err = client.EventsV1().Events("default").Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "marker", Namespace: "default"},
		EventTime:  metav1.NewMicroTime(time.Now()), ReportingController: "e2e/scale", ReportingInstance: "scale-1",
		Action: "Mark", Reason: "Marker", Type: corev1.EventTypeNormal, Note: "marker",
		Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web-0", UID: "00000000-0000-4000-8000-000000000000"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil("the marker stored", 10*time.Minute, func() bool {
		_, byReason, _ := eventRecords(t, srv)
		return byReason["Marker singleton"] == 1
	})
	byUID, _, _ := eventRecords(t, srv) // the scenario's own: stored() counts the API server's too
	got := 0
	for _, c := range byUID {
		got += c
	}
	if got != n+1 {
		t.Errorf("after the restart %d records are stored, want %d: %d repeated", got, n+1, got-n-1)
	}
	t.Logf("restart with %d live Events: relisted and caught up in %s; peak RSS %d KiB",
		n, time.Since(relisted).Round(time.Millisecond), peakRSS(col.Pid()))
}

// checkpointResourceVersion reads the resource version of kube_events' checkpoint (its
// binary encoding, receiver design.md rule 5.8: "kev1", a uvarint length, then a JSON head).
func checkpointResourceVersion(b []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(b, []byte("kev1"))
	if !ok {
		return "", false
	}
	n, w := binenc.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)-w) {
		return "", false
	}
	var head struct {
		ResourceVersions map[string]string `json:"resource_versions"`
	}
	if json.Unmarshal(rest[w:w+int(n)], &head) != nil {
		return "", false
	}
	rv, ok := head.ResourceVersions[""]
	return rv, ok
}
