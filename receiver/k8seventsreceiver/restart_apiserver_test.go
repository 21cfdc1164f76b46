// SPDX-License-Identifier: Apache-2.0

package k8seventsreceiver

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// The scaled clock of the restart tests (configuration, not a fake clock): the recorder's 6m
// finish window is 2s here, its 30m heartbeat a write the test makes, the 40m silence timer
// 12s (room for two restarts between two heartbeats on a loaded machine), the legacy 15m
// finish_after 8s.
const (
	scaledFinishWindow     = 2 * time.Second
	scaledHeartbeatTimeout = 12 * time.Second
	scaledFinishAfter      = 8 * time.Second
)

// restartRig runs one receiver at a time on one checkpoint, restarted at will.
type restartRig struct {
	t      *testing.T
	client kubernetes.Interface
	cfg    *Config
	host   hostWith
	sink   *consumertest.LogsSink
	r      *kubeEventsReceiver
	probes atomic.Int32
}

func newRestartRig(t *testing.T, kubeconfig string, client kubernetes.Interface) *restartRig {
	storeID, mem, host := memHost(nil)
	cfg := testReceiverConfig(kubeconfig, &storeID)
	cfg.Series.FinishWindow = scaledFinishWindow
	cfg.Series.HeartbeatTimeout = scaledHeartbeatTimeout
	cfg.Series.FinishAfter = scaledFinishAfter
	cfg.Checkpoint.Interval = 200 * time.Millisecond
	g := &restartRig{t: t, client: client, cfg: cfg, host: host, sink: &consumertest.LogsSink{}}
	g.r = startReceiver(t, cfg, host, g.sink)
	waitCheckpoint(t, mem)
	g.probe()
	return g
}

// probe creates an Event and waits for its record: the receiver's list is done and it watches.
func (g *restartRig) probe() {
	reason := fmt.Sprintf("Probe%d", g.probes.Add(1))
	_, err := g.client.EventsV1().Events("default").Create(context.Background(), &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: "default"},
		EventTime:  metav1.NowMicro(), ReportingController: "test/probe", ReportingInstance: "probe-1",
		Action: "Probe", Reason: reason, Type: "Normal", Note: "watch is up",
		Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "probe", UID: "uid-probe"},
	}, metav1.CreateOptions{})
	require.NoError(g.t, err)
	require.Eventually(g.t, func() bool { return seen{g.sink}.counts()[reason+" singleton"] == 1 }, 30*time.Second, 20*time.Millisecond)
}

func (g *restartRig) stop() { require.NoError(g.t, g.r.Shutdown(context.Background())) }

func (g *restartRig) start() {
	g.r = startReceiver(g.t, g.cfg, g.host, g.sink)
	g.probe()
}

// history is the series states, with their counts, that the records of reason show, in order.
func (g *restartRig) history(reason string) []string {
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

func (g *restartRig) waitHistory(reason string, want ...string) {
	g.t.Helper()
	require.Eventually(g.t, func() bool { return strings.Join(g.history(reason), " ") == strings.Join(want, " ") },
		30*time.Second, 20*time.Millisecond, "history of %s: %v", reason, g.history(reason))
}

// settle checks that nothing more arrives for these reasons for longer than the silence timer.
func (g *restartRig) settle(reasons ...string) {
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
func newSeries(g *restartRig, rec events.EventRecorder, reason string) *eventsv1.Event {
	p := pod("default", strings.ToLower(reason))
	rec.Eventf(p, nil, corev1.EventTypeWarning, reason, "Restart", "Back-off restarting failed container")
	g.waitHistory(reason, "singleton:1")
	rec.Eventf(p, nil, corev1.EventTypeWarning, reason, "Restart", "Back-off restarting failed container")
	g.waitHistory(reason, "singleton:1", "start:2")
	return findEvent(g.t, g.client, "default", reason)
}

// waitPast waits until d has passed since t.
func waitPast(t *testing.T, since time.Time, d time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return time.Since(since) > d }, d+10*time.Second, 20*time.Millisecond)
}

// TestRestartMomentsNewRecorder restarts the receiver at each moment of issue 34 for a series
// written by client-go's tools/events recorder (its creation and first series write; its
// heartbeat and final writes are the same PATCH, made here through the same client and so by
// the same field manager). Every series: one start, ongoing records only for counts written,
// one finished with the final count, never a second start.
func TestRestartMomentsNewRecorder(t *testing.T) {
	cluster, client := apiServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := newRestartRig(t, cluster.Kubeconfig, client)
	defer func() { g.stop() }()
	nb := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	require.NoError(t, nb.StartRecordingToSinkWithContext(ctx))
	defer nb.Shutdown()
	rec := nb.NewRecorder(scheme.Scheme, "test/new-recorder")
	final := func() time.Time { return time.Now().Add(-scaledFinishWindow - 1500*time.Millisecond) }

	// 1. Right after a write.
	e := newSeries(g, rec, "AfterWrite")
	seriesPatch(t, client, "default", e.Name, 5, time.Now())
	g.waitHistory("AfterWrite", "singleton:1", "start:2", "ongoing:5")
	g.stop()
	g.start()
	seriesPatch(t, client, "default", e.Name, 7, time.Now())
	g.waitHistory("AfterWrite", "singleton:1", "start:2", "ongoing:5", "ongoing:7")
	seriesPatch(t, client, "default", e.Name, 8, final())
	g.waitHistory("AfterWrite", "singleton:1", "start:2", "ongoing:5", "ongoing:7", "finished:8")

	// 2. Between two heartbeats, more than the finish window after the last write: down while
	// one heartbeat is written (found above the checkpoint), restarted later.
	e = newSeries(g, rec, "Between")
	g.stop()
	seriesPatch(t, client, "default", e.Name, 6, time.Now())
	wrote := time.Now()
	waitPast(t, wrote, scaledFinishWindow+1500*time.Millisecond)
	g.start()
	g.waitHistory("Between", "singleton:1", "start:2", "ongoing:6")
	// and restarted again, now at or below the checkpoint, still more than the window after
	g.stop()
	waitPast(t, wrote, scaledFinishWindow+2500*time.Millisecond)
	g.start()
	seriesPatch(t, client, "default", e.Name, 9, time.Now())
	g.waitHistory("Between", "singleton:1", "start:2", "ongoing:6", "ongoing:9")
	seriesPatch(t, client, "default", e.Name, 10, final())
	g.waitHistory("Between", "singleton:1", "start:2", "ongoing:6", "ongoing:9", "finished:10")

	// 3. After the final write, before the silence timer: the recorder's final write repeats
	// its last heartbeat (no change, no notification), so only the silence timer finishes it,
	// counting from the last write, across the restart.
	e = newSeries(g, rec, "Invisible")
	seriesPatch(t, client, "default", e.Name, 4, time.Now())
	g.waitHistory("Invisible", "singleton:1", "start:2", "ongoing:4")
	g.stop()
	g.start()
	g.waitHistory("Invisible", "singleton:1", "start:2", "ongoing:4", "finished:4")
	// and a visible final write made while down
	e = newSeries(g, rec, "FinalWhileDown")
	g.stop()
	seriesPatch(t, client, "default", e.Name, 3, final())
	g.start()
	g.waitHistory("FinalWhileDown", "singleton:1", "start:2", "finished:3")

	// 4. While the final write happens: the shutdown and the write race; whichever term sees
	// it, it is finished once.
	e = newSeries(g, rec, "During")
	done := make(chan struct{})
	go func() {
		defer close(done)
		seriesPatch(t, client, "default", e.Name, 5, final()) //nolint:testifylint // the test waits for done before it ends
	}()
	g.stop()
	<-done
	g.start()
	g.waitHistory("During", "singleton:1", "start:2", "finished:5")

	g.settle("AfterWrite", "Between", "Invisible", "FinalWhileDown", "During")
}

// TestRestartMomentsLegacyRecorder restarts the receiver at the same moments for a series
// written by client-go's tools/record recorder (core/v1: count PATCHed at every occurrence;
// finished by series.finish_after of silence, counted from its own last occurrence).
func TestRestartMomentsLegacyRecorder(t *testing.T) {
	cluster, client := apiServer(t)
	g := newRestartRig(t, cluster.Kubeconfig, client)
	defer func() { g.stop() }()
	lb := record.NewBroadcaster()
	lb.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	defer lb.Shutdown()
	rec := lb.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: "node-1"})
	occur := func(reason string, n int, wantCount int32) {
		p := pod("default", strings.ToLower(reason))
		for i := 0; i < n; i++ {
			rec.Event(p, corev1.EventTypeWarning, reason, "Back-off restarting failed container")
		}
		require.Eventually(t, func() bool {
			l, err := client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "reason=" + reason})
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

	// 2. Occurrences while down (above the checkpoint), restarted within finish_after.
	start("LBetween")
	g.stop()
	occur("LBetween", 3, 5)
	g.start()
	g.waitHistory("LBetween", "singleton:1", "start:2", "finished:5")

	// 3. After the last occurrence, finish_after passing while down: finished once on restart.
	start("LSilent")
	occur("LSilent", 1, 3)
	g.stop()
	waitPast(t, time.Now(), scaledFinishAfter+time.Second)
	g.start()
	g.waitHistory("LSilent", "singleton:1", "start:2", "finished:3")

	// 4. While the sweep finishes it: restarted around the end of finish_after.
	start("LDuring")
	began := time.Now()
	waitPast(t, began, scaledFinishAfter-200*time.Millisecond)
	g.stop()
	g.start()
	g.waitHistory("LDuring", "singleton:1", "start:2", "finished:2")

	g.settle("LAfterWrite", "LBetween", "LSilent", "LDuring")
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
