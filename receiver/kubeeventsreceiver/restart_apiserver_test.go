// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

// The scaled clock of the restart-moment tests (configuration, not a fake clock): the recorder's 6m
// finish window is 2s here, its 30m heartbeat a write the test makes, the 40m silence timer
// 12s (room for two restarts between two heartbeats on a loaded machine), the legacy 15m
// finish_after 8s.
const (
	scaledFinishWindow     = 2 * time.Second
	scaledHeartbeatTimeout = 12 * time.Second
	scaledFinishAfter      = 8 * time.Second
)

// disruption is what interrupts the receiver at a moment of issue 34.
type disruption string

const (
	// byRestart stops the receiver (graceful shutdown) and starts a new one on its checkpoint.
	byRestart disruption = "restart"
	// byLease runs two replicas on one Lease, each through a proxy of its own: the leader's
	// Lease requests are refused until the other replica takes the Lease over (a real loss:
	// the renewal fails, the term ends, the standby acquires after lease_duration), then the
	// deposed replica's traffic passes again and it stands by; the next disruption hands the
	// Lease back.
	byLease disruption = "lease"
	// byGone cuts the receiver's watch and keeps it away (429), then answers its resumed watch
	// with 410 Expired: it relists from the checkpoint of its own term, table kept.
	byGone disruption = "gone"
)

var disruptions = []disruption{byRestart, byLease, byGone}

// eachDisruption runs fn as one subtest per disruption, all at once: their time is spent
// waiting on the scaled timers, and t.Parallel would queue them behind -parallel (GOMAXPROCS).
func eachDisruption(t *testing.T, fn func(t *testing.T, how disruption)) {
	var wg sync.WaitGroup
	for _, how := range disruptions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(string(how), func(t *testing.T) { fn(t, how) })
		}()
	}
	wg.Wait()
}

// momentRig runs the receiver in namespace ns of one API server and disrupts it at will;
// every replica writes into one sink.
type momentRig struct {
	t      *testing.T
	how    disruption
	ns     string
	client kubernetes.Interface
	cfg    *Config
	host   hostWith
	sink   *consumertest.LogsSink
	probes atomic.Int32

	r      *kubeEventsReceiver     // byRestart, byGone
	proxy  *kubecluster.Proxy      // byGone
	reader *sdkmetric.ManualReader // byGone: the receiver's counters
	gone   int64                   // byGone: the 410s answered so far

	replicas [2]*kubeEventsReceiver // byLease
	proxies  [2]*kubecluster.Proxy
	leader   int
}

var leaseIdentities = [2]string{"a", "b"}

func newMomentRig(t *testing.T, cluster *kubecluster.Cluster, client kubernetes.Interface, how disruption) *momentRig {
	ns := "moments-" + string(how)
	_, err := client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	storeID, mem, host := memHost(nil)
	cfg := testReceiverConfig(cluster.Kubeconfig, &storeID)
	cfg.Namespaces = []string{ns}
	cfg.Series.FinishWindow = scaledFinishWindow
	cfg.Series.HeartbeatTimeout = scaledHeartbeatTimeout
	cfg.Series.FinishAfter = scaledFinishAfter
	cfg.Checkpoint.Interval = 200 * time.Millisecond
	g := &momentRig{t: t, how: how, ns: ns, client: client, cfg: cfg, host: host, sink: &consumertest.LogsSink{}}
	t.Cleanup(g.close)
	switch how {
	case byRestart:
		g.r = startReceiver(t, cfg, host, g.sink)
		waitCheckpoint(t, mem)
	case byGone:
		g.proxy = kubecluster.StartProxy(t, cluster)
		cfg.Kubeconfig = g.proxy.Kubeconfig
		g.reader = sdkmetric.NewManualReader()
		set := receivertest.NewNopSettings(metadata.Type)
		set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(g.reader))
		r, err := newReceiver(set, cfg)
		require.NoError(t, err)
		r.nextLogs = g.sink
		require.NoError(t, r.Start(context.Background(), host))
		g.r = r
		waitCheckpoint(t, mem)
	case byLease:
		for i := range g.replicas {
			g.proxies[i] = kubecluster.StartProxy(t, cluster)
			c := *cfg
			c.Storage = nil
			c.Kubeconfig = g.proxies[i].Kubeconfig
			c.LeaderElection = LeaderElectionConfig{
				Enabled: true, LeaseName: "moments", LeaseNamespace: ns, Identity: leaseIdentities[i],
				LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond,
			}
			g.replicas[i] = startReceiver(t, &c, componenttest.NewNopHost(), g.sink)
			if i == 0 {
				require.Eventually(t, func() bool { return g.holder() == leaseIdentities[0] }, 30*time.Second, 20*time.Millisecond)
			}
		}
		require.Eventually(t, func() bool {
			cm, err := client.CoreV1().ConfigMaps(ns).Get(context.Background(), "moments-checkpoint", metav1.GetOptions{})
			return err == nil && len(cm.BinaryData[checkpointKey]) > 0
		}, 30*time.Second, 20*time.Millisecond)
	}
	g.probe()
	return g
}

func (g *momentRig) holder() string {
	l, err := g.client.CoordinationV1().Leases(g.ns).Get(context.Background(), "moments", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// probe creates an Event and waits for its record: the receiver (the leader) watches.
func (g *momentRig) probe() {
	reason := fmt.Sprintf("Probe%d", g.probes.Add(1))
	_, err := g.client.EventsV1().Events(g.ns).Create(context.Background(), &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: g.ns},
		EventTime:  metav1.NowMicro(), ReportingController: "test/probe", ReportingInstance: "probe-1",
		Action: "Probe", Reason: reason, Type: "Normal", Note: "watch is up",
		Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: g.ns, Name: "probe", UID: "uid-probe"},
	}, metav1.CreateOptions{})
	require.NoError(g.t, err)
	require.Eventually(g.t, func() bool { return seen{g.sink}.counts()[reason+" singleton"] == 1 }, 30*time.Second, 20*time.Millisecond)
}

// stop begins the disruption: the receiver stops, the leader loses its Lease to the other
// replica, or the watch is cut and kept away.
func (g *momentRig) stop() {
	switch g.how {
	case byRestart:
		require.NoError(g.t, g.r.Shutdown(context.Background()))
	case byGone:
		g.proxy.Throttle(1<<30, 1)
		g.proxy.DropWatches()
		require.Eventually(g.t, func() bool { return g.proxy.OpenWatches() == 0 }, 10*time.Second, 20*time.Millisecond)
	case byLease:
		next := 1 - g.leader
		g.proxies[g.leader].Refuse("/leases/")
		require.Eventually(g.t, func() bool { return g.holder() == leaseIdentities[next] }, 30*time.Second, 20*time.Millisecond)
		g.leader = next
	}
}

// start ends the disruption and waits until the receiver (the leader) watches again.
func (g *momentRig) start() {
	switch g.how {
	case byRestart:
		g.r = startReceiver(g.t, g.cfg, g.host, g.sink)
	case byGone:
		g.gone++
		g.proxy.ExpireNextWatch()
		g.proxy.Throttle(0, 0)
		require.Eventually(g.t, func() bool { return g.proxy.Expired() == g.gone }, 30*time.Second, 20*time.Millisecond)
	case byLease:
		g.proxies[1-g.leader].Refuse("") // the deposed replica stands by again
	}
	g.probe()
}

func (g *momentRig) close() {
	switch g.how {
	case byRestart, byGone:
		if g.r != nil {
			require.NoError(g.t, g.r.Shutdown(context.Background()))
			g.r = nil
		}
	case byLease:
		for i, r := range g.replicas {
			if r != nil {
				g.proxies[i].Refuse("")
				require.NoError(g.t, r.Shutdown(context.Background()))
				g.replicas[i] = nil
			}
		}
	}
}

// history is the series states, with their counts, that the records of reason show, in order.
func (g *momentRig) history(reason string) []string {
	var out []string
	for _, lr := range (seen{g.sink}).records() {
		if str(lr, attr.EventReason) != reason {
			continue
		}
		c, _ := lr.Attributes().Get(attr.EventCount)
		out = append(out, fmt.Sprintf("%s:%d", str(lr, attr.EventSeriesState), c.Int()))
	}
	return out
}

func (g *momentRig) waitHistory(reason string, want ...string) {
	g.t.Helper()
	require.Eventually(g.t, func() bool { return strings.Join(g.history(reason), " ") == strings.Join(want, " ") },
		30*time.Second, 20*time.Millisecond, "history of %s: %v", reason, g.history(reason))
}

// settle checks that nothing more arrives for these reasons for longer than the silence timer.
func (g *momentRig) settle(reasons ...string) {
	g.t.Helper()
	want := map[string]string{}
	for _, r := range reasons {
		want[r] = strings.Join(g.history(r), " ")
	}
	require.Never(g.t, func() bool {
		for _, r := range reasons {
			if strings.Join(g.history(r), " ") != want[r] {
				return true
			}
		}
		return false
	}, scaledHeartbeatTimeout+time.Second, 100*time.Millisecond, "histories changed: %v", want)
}

// newSeries has client-go's tools/events recorder create an Event for a Pod of its own and
// write its series (count 2), and waits for the singleton and the start.
func newSeries(g *momentRig, rec events.EventRecorder, reason string) *eventsv1.Event {
	p := pod(g.ns, strings.ToLower(reason))
	rec.Eventf(p, nil, corev1.EventTypeWarning, reason, "Restart", "Back-off restarting failed container")
	g.waitHistory(reason, "singleton:1")
	rec.Eventf(p, nil, corev1.EventTypeWarning, reason, "Restart", "Back-off restarting failed container")
	g.waitHistory(reason, "singleton:1", "start:2")
	return findEvent(g.t, g.client, g.ns, reason)
}

// waitPast waits until d has passed since t.
func waitPast(t *testing.T, since time.Time, d time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return time.Since(since) > d }, d+10*time.Second, 20*time.Millisecond)
}

// TestRestartMomentsNewRecorder disrupts the receiver at each moment of issue 34 for a series
// written by client-go's tools/events recorder (its creation and first series write; its
// heartbeat and final writes are the same PATCH, made here through the same client and so by
// the same field manager), once per disruption (restart, Lease loss, 410 relist), the three
// side by side on one API server, each in a namespace of its own. Every series: one start,
// ongoing records only for counts written, one finished with the final count, never a second
// start.
func TestRestartMomentsNewRecorder(t *testing.T) {
	t.Parallel()
	cluster, client := apiServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	nb := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	require.NoError(t, nb.StartRecordingToSinkWithContext(ctx))
	t.Cleanup(nb.Shutdown)
	rec := nb.NewRecorder(scheme.Scheme, "test/new-recorder")
	final := func() time.Time { return time.Now().Add(-scaledFinishWindow - 1500*time.Millisecond) }

	eachDisruption(t, func(t *testing.T, how disruption) {
		g := newMomentRig(t, cluster, client, how)
		ns := g.ns

		// 1. Right after a write.
		e := newSeries(g, rec, "AfterWrite")
		seriesPatch(t, client, ns, e.Name, 5, time.Now())
		g.waitHistory("AfterWrite", "singleton:1", "start:2", "ongoing:5")
		g.stop()
		g.start()
		seriesPatch(t, client, ns, e.Name, 7, time.Now())
		g.waitHistory("AfterWrite", "singleton:1", "start:2", "ongoing:5", "ongoing:7")
		seriesPatch(t, client, ns, e.Name, 8, final())
		g.waitHistory("AfterWrite", "singleton:1", "start:2", "ongoing:5", "ongoing:7", "finished:8")

		// 2. Between two heartbeats, more than the finish window after the last write:
		// disrupted while one heartbeat is written (found above the checkpoint), back later.
		e = newSeries(g, rec, "Between")
		g.stop()
		seriesPatch(t, client, ns, e.Name, 6, time.Now())
		wrote := time.Now()
		waitPast(t, wrote, scaledFinishWindow+1500*time.Millisecond)
		g.start()
		g.waitHistory("Between", "singleton:1", "start:2", "ongoing:6")
		// and disrupted again, now at or below the checkpoint, still more than the window after
		g.stop()
		waitPast(t, wrote, scaledFinishWindow+2500*time.Millisecond)
		g.start()
		seriesPatch(t, client, ns, e.Name, 9, time.Now())
		g.waitHistory("Between", "singleton:1", "start:2", "ongoing:6", "ongoing:9")
		seriesPatch(t, client, ns, e.Name, 10, final())
		g.waitHistory("Between", "singleton:1", "start:2", "ongoing:6", "ongoing:9", "finished:10")

		// 3. After the final write, before the silence timer: the recorder's final write
		// repeats its last heartbeat (no change, no notification), so only the silence timer
		// finishes it, counting from the last write, across the disruption.
		e = newSeries(g, rec, "Invisible")
		seriesPatch(t, client, ns, e.Name, 4, time.Now())
		g.waitHistory("Invisible", "singleton:1", "start:2", "ongoing:4")
		g.stop()
		g.start()
		g.waitHistory("Invisible", "singleton:1", "start:2", "ongoing:4", "finished:4")
		// and a visible final write made during the disruption
		e = newSeries(g, rec, "FinalWhileDown")
		g.stop()
		seriesPatch(t, client, ns, e.Name, 3, final())
		g.start()
		g.waitHistory("FinalWhileDown", "singleton:1", "start:2", "finished:3")

		// 4. While the final write happens: the disruption and the write race; whichever
		// term sees it, it is finished once.
		e = newSeries(g, rec, "During")
		done := make(chan error, 1)
		go func() {
			patch := fmt.Sprintf(`{"series":{"count":5,"lastObservedTime":%q}}`, final().UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
			_, err := client.EventsV1().Events(ns).Patch(context.Background(), e.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
			done <- err
		}()
		g.stop()
		require.NoError(t, <-done)
		g.start()
		g.waitHistory("During", "singleton:1", "start:2", "finished:5")

		g.settle("AfterWrite", "Between", "Invisible", "FinalWhileDown", "During")
		if how == byGone {
			assert.Equal(t, int64(6), counter(t, g.reader, "otelcol_receiver_kube_events_gone"), "one 410 per disruption")
			assert.Equal(t, int64(7), counter(t, g.reader, "otelcol_receiver_kube_events_relists"), "the start and one per 410")
		}
	})
}

// TestRestartMomentsLegacyRecorder disrupts the receiver at the same moments, in the same three
// ways, for a series written by client-go's tools/record recorder (core/v1: count PATCHed at
// every occurrence; finished by series.finish_after of silence, counted from its own last
// occurrence).
func TestRestartMomentsLegacyRecorder(t *testing.T) {
	t.Parallel()
	cluster, client := apiServer(t)
	lb := record.NewBroadcaster()
	lb.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	t.Cleanup(lb.Shutdown)
	rec := lb.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: "node-1"})

	eachDisruption(t, func(t *testing.T, how disruption) {
		g := newMomentRig(t, cluster, client, how)
		occur := func(reason string, n int, wantCount int32) {
			p := pod(g.ns, strings.ToLower(reason))
			for i := 0; i < n; i++ {
				rec.Event(p, corev1.EventTypeWarning, reason, "Back-off restarting failed container")
			}
			require.Eventually(t, func() bool {
				l, err := client.CoreV1().Events(g.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "reason=" + reason})
				return err == nil && len(l.Items) == 1 && l.Items[0].Count == wantCount
			}, 20*time.Second, 20*time.Millisecond)
		}
		start := func(reason string) {
			occur(reason, 1, 1)
			g.waitHistory(reason, "singleton:1")
			occur(reason, 1, 2)
			g.waitHistory(reason, "singleton:1", "start:2")
		}

		// 1. Right after a write, then more occurrences: no second start, finished at the last.
		start("LAfterWrite")
		g.stop()
		g.start()
		occur("LAfterWrite", 2, 4)
		g.waitHistory("LAfterWrite", "singleton:1", "start:2", "finished:4")

		// 2. Occurrences during the disruption (above the checkpoint), back within finish_after.
		start("LBetween")
		g.stop()
		occur("LBetween", 3, 5)
		g.start()
		g.waitHistory("LBetween", "singleton:1", "start:2", "finished:5")

		// 3. After the last occurrence, finish_after passing during the disruption: finished once.
		start("LSilent")
		occur("LSilent", 1, 3)
		g.stop()
		waitPast(t, time.Now(), scaledFinishAfter+time.Second)
		g.start()
		g.waitHistory("LSilent", "singleton:1", "start:2", "finished:3")

		// 4. While the sweep finishes it: disrupted around the end of finish_after.
		start("LDuring")
		began := time.Now()
		waitPast(t, began, scaledFinishAfter-200*time.Millisecond)
		g.stop()
		g.start()
		g.waitHistory("LDuring", "singleton:1", "start:2", "finished:2")

		g.settle("LAfterWrite", "LBetween", "LSilent", "LDuring")
	})
}

// TestCheckpointDeposedLeaderLateWrite is rule 5.7 against the API server: the leader of term 1
// writes its checkpoint late, after the leader of term 2 loaded it. Term 2's next write meets the
// conflict, re-reads, merges and writes (it never freezes); term 1's next write is fenced and
// the stored checkpoint stays term 2's. The merge keeps term 2's resource version (no repeat of
// what it emitted), term 1's late finish (no second finished) and term 1's late start (no second
// start, no loss).
func TestCheckpointDeposedLeaderLateWrite(t *testing.T) {
	_, client := apiServer(t)
	ctx := context.Background()
	store := func() *configMapCheckpoints {
		return &configMapCheckpoints{
			client: client, namespace: "default", name: "events-checkpoint",
			conflictBackoff: BackoffConfig{InitialInterval: 10 * time.Millisecond, MaxInterval: 100 * time.Millisecond},
		}
	}
	k1, k2, k3 := seriesKey("uid-1"), seriesKey("uid-2"), seriesKey("uid-3")
	at := time.Now().UTC().Truncate(time.Second)
	a, b := store(), store()
	_, err := a.Save(ctx, &checkpoint{
		Term: 1, Holder: "a", ResourceVersions: map[string]string{"": "100"},
		Series: map[uint64]priorSeries{k1: {Count: 2, Last: at, At: at, Term: 1}},
	})
	require.NoError(t, err)

	loaded, err := b.Load(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), loaded.Term)
	tab := newSeriesTable(testTimers())
	tab.term = 2
	tab.restore(loaded.Series)
	tab.seed(event{UID: "uid-1", Namespace: "default", Count: 2, First: at, Last: at, Written: at}, at)
	require.Contains(t, tab.open, "uid-1")

	// term 1's late write: its last batch finished uid-1 by silence and started uid-2
	_, err = a.Save(ctx, &checkpoint{
		Term: 1, Holder: "a", ResourceVersions: map[string]string{"": "120"},
		Series: map[uint64]priorSeries{k1: {Count: 2, At: at, Term: 1, Tomb: true}, k2: {Count: 3, Last: at, At: at, Term: 1}},
	})
	require.NoError(t, err, "no newer term wrote yet: the late write lands")

	// term 2 writes: conflict, re-read, merge, write
	tab.observe(event{UID: "uid-3", Namespace: "default", Count: 2, First: at, Last: at, Written: at}, at, false, true)
	ours := &checkpoint{Term: 2, Holder: "b", ResourceVersions: map[string]string{"": "130"}, Series: tab.snapshot()}
	saved, err := b.Save(ctx, ours)
	require.NoError(t, err)
	require.NotSame(t, ours, saved, "merged after the conflict")
	for k, p := range saved.Series {
		if p.Term < 2 {
			tab.absorb(k, p)
		}
	}
	assert.NotContains(t, tab.open, "uid-1", "term 1 finished it: term 2 will not finish it again")
	for _, tr := range tab.sweep(at.Add(time.Hour)) {
		assert.NotEqual(t, "uid-1", tr.Event.UID, "and its silence timer does not either")
	}

	// term 1 once more: fenced
	_, err = a.Save(ctx, &checkpoint{Term: 1, Holder: "a", ResourceVersions: map[string]string{"": "125"}})
	require.ErrorIs(t, err, errFenced)

	final, err := store().Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), final.Term)
	assert.Equal(t, "130", final.ResourceVersions[""])
	assert.True(t, final.Series[k1].Tomb, "term 1's finish kept")
	assert.Equal(t, int32(3), final.Series[k2].Count, "term 1's start kept")
	assert.Equal(t, int32(2), final.Series[k3].Count, "term 2's own series kept")

	// the next leader (term 3) meets uid-2 above the checkpoint at a higher count: ongoing,
	// not a second start
	next := newSeriesTable(testTimers())
	next.term = 3
	next.restore(final.Series)
	got := next.observe(event{UID: "uid-2", Namespace: "default", Count: 5, First: at, Last: at.Add(time.Second), Written: at.Add(time.Second)}, at.Add(2*time.Second), false, false)
	require.Len(t, got, 1)
	assert.Equal(t, stateOngoing, got[0].State)
	assert.Equal(t, int32(3), got[0].PrevCount)
}
