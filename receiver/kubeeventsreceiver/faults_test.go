// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

func createEvents(t *testing.T, client kubernetes.Interface, reason string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		_, err := client.EventsV1().Events("default").Create(context.Background(), &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "ev-", Namespace: "default"},
			EventTime:  metav1.NowMicro(), ReportingController: "test/faults", ReportingInstance: "faults-1",
			Action: "Act", Reason: reason, Type: "Normal", Note: fmt.Sprintf("%s %d", reason, i),
			Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: fmt.Sprintf("p-%d", i)},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// startThroughProxy starts a receiver whose API traffic goes through a fault proxy and waits
// for its first checkpoint (the list is done, the watch is opening); tune, if set, changes the
// test configuration first.
func startThroughProxy(t *testing.T, proxy *kubecluster.Proxy, sink *consumertest.LogsSink, tune func(*Config)) (*kubeEventsReceiver, *sdkmetric.ManualReader) {
	t.Helper()
	storeID := component.MustNewID("mem")
	mem := &memStorage{data: map[string][]byte{}}
	host := hostWith{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{storeID: mem}}
	reader := sdkmetric.NewManualReader()
	set := receivertest.NewNopSettings(metadata.Type)
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	cfg := testReceiverConfig(proxy.Kubeconfig, &storeID)
	if tune != nil {
		tune(cfg)
	}
	r, err := newReceiver(set, cfg)
	r.nextLogs = sink
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), host))
	require.Eventually(t, func() bool {
		v, _ := memClient{mem}.Get(context.Background(), checkpointKey)
		return len(v) > 0 && proxy.OpenWatches() == 1
	}, 60*time.Second, 20*time.Millisecond)
	return r, reader
}

// compactingCluster starts an API server without a watch cache and with a 1s etcd compaction,
// a fault proxy in front of it, and a client that writes around the proxy.
func compactingCluster(t *testing.T) (*kubecluster.Proxy, kubernetes.Interface) {
	t.Helper()
	cluster := kubecluster.StartWith(t, "-etcd-compaction-interval=1s", "-watch-cache=false")
	proxy := kubecluster.StartProxy(t, cluster)
	restCfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(restCfg)
	require.NoError(t, err)
	return proxy, client
}

// counter is the sum of the receiver's counter name over all attribute sets.
func counter(t *testing.T, reader *sdkmetric.ManualReader, name string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, dp := range sum.DataPoints {
					total += dp.Value
				}
			}
		}
	}
	return total
}

// TestWatchExpiryRelists runs the API server without a watch cache and with a 1s etcd
// compaction: a watch cut and kept away (429) until its resource version is compacted resumes
// into 410 Gone; the receiver relists and emits exactly the Events created meanwhile.
func TestWatchExpiryRelists(t *testing.T) {
	proxy, client := compactingCluster(t)
	sink := &consumertest.LogsSink{}
	got := seen{sink}
	r, reader := startThroughProxy(t, proxy, sink, nil)
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()

	createEvents(t, client, "Before", 5)
	require.Eventually(t, func() bool { return got.counts()["Before singleton"] == 5 }, 20*time.Second, 20*time.Millisecond)

	proxy.Throttle(1<<30, 1) // every request answered 429 until lifted
	require.Positive(t, proxy.DropWatches())
	createEvents(t, client, "During", 7)
	// let etcd compact past the watch's resource version: more writes, two compaction periods
	time.Sleep(3 * time.Second) //nolint:forbidigo // waiting out the server's compaction timer, not synchronizing
	createEvents(t, client, "Late", 1)
	proxy.Throttle(0, 0)

	require.Eventually(t, func() bool {
		c := got.counts()
		return c["During singleton"] == 7 && c["Late singleton"] == 1
	}, 60*time.Second, 20*time.Millisecond, "counts %v", got.counts())
	require.Never(t, func() bool {
		c := got.counts()
		return c["Before singleton"] != 5 || c["During singleton"] != 7 || c["Late singleton"] != 1
	}, time.Second, 50*time.Millisecond)
	assert.Positive(t, proxy.Throttled())
	assert.Positive(t, counter(t, reader, "otelcol_receiver_kube_events_gone"), "the resumed watch got 410 Gone")
	assert.Equal(t, int64(2), counter(t, reader, "otelcol_receiver_kube_events_relists"), "the start and the 410")
	assert.Positive(t, counter(t, reader, "otelcol_receiver_kube_events_throttled"))
}

// TestThrottledAPIServer answers 429 with Retry-After: 1 to every request for a while: the
// receiver waits as told (the request rate stays near one per second), then catches up with
// nothing lost and nothing repeated.
func TestThrottledAPIServer(t *testing.T) {
	cluster := kubecluster.Start(t)
	proxy := kubecluster.StartProxy(t, cluster)
	restCfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(restCfg)
	require.NoError(t, err)
	sink := &consumertest.LogsSink{}
	got := seen{sink}
	r, reader := startThroughProxy(t, proxy, sink, nil)
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()

	const throttled = 6
	before := proxy.Requests()
	start := time.Now()
	proxy.Throttle(throttled, 1)
	require.Positive(t, proxy.DropWatches())
	createEvents(t, client, "Busy", 10)
	require.Eventually(t, func() bool { return got.counts()["Busy singleton"] == 10 }, 60*time.Second, 20*time.Millisecond)
	elapsed := time.Since(start)
	requests := proxy.Requests() - before
	// six 429s each waited out for a second: at least ~6s, and few requests beyond the 429s
	assert.GreaterOrEqual(t, elapsed, 5*time.Second)
	assert.LessOrEqual(t, requests, int64(throttled+4), "requests %d in %s", requests, elapsed)
	t.Logf("429 phase: %d requests in %s (%.1f/s)", requests, elapsed, float64(requests)/elapsed.Seconds())
	require.Never(t, func() bool { return got.counts()["Busy singleton"] != 10 }, time.Second, 50*time.Millisecond)
	assert.Equal(t, int64(throttled), counter(t, reader, "otelcol_receiver_kube_events_throttled"))
	assert.Equal(t, int64(1), counter(t, reader, "otelcol_receiver_kube_events_relists"), "a throttled watch does not relist")
}

// TestRelistContinueExpired runs the API server without a watch cache and with a 1s etcd
// compaction, and the receiver at 0.5 requests per second with 5 Events per page: the relist
// after 410 Gone reads a page every 2s while other writes move etcd on, so its continue token
// expires mid-list. The relist finishes with one full list (rule 5.6) instead of starting over
// (which would expire again, forever): every Event is emitted exactly once and the fallback
// is counted.
func TestRelistContinueExpired(t *testing.T) {
	proxy, client := compactingCluster(t)
	sink := &consumertest.LogsSink{}
	got := seen{sink}
	r, reader := startThroughProxy(t, proxy, sink, func(cfg *Config) {
		cfg.Client.QPS, cfg.Client.Burst, cfg.Client.PageSize = 0.5, 1, 5
	})
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()

	// Writes to another resource move etcd's revision on, so each compaction passes the list's.
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tick", Namespace: "default"}}
		_, _ = client.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{})
		ticker := time.NewTicker(100 * time.Millisecond)
		defer ticker.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-ticker.C:
			}
			cm.Data = map[string]string{"n": strconv.Itoa(i)}
			_, _ = client.CoreV1().ConfigMaps("default").Update(context.Background(), cm, metav1.UpdateOptions{})
		}
	}()
	defer func() { close(stop); <-done }()

	const events = 30 // six pages: 10s at 0.5 requests per second, far beyond the compaction
	proxy.Throttle(1<<30, 1)
	require.Positive(t, proxy.DropWatches())
	createEvents(t, client, "Paged", events)
	// let etcd compact past the watch's resource version, so that it resumes into 410 Gone
	time.Sleep(3 * time.Second) //nolint:forbidigo // waiting out the server's compaction timer, not synchronizing
	proxy.Throttle(0, 0)

	require.Eventually(t, func() bool { return got.counts()["Paged singleton"] == events },
		30*time.Second, 20*time.Millisecond, "counts %v", got.counts())
	require.Never(t, func() bool { return got.counts()["Paged singleton"] != events }, time.Second, 50*time.Millisecond)
	assert.Len(t, got.counts(), 1, "only the Paged Events: %v", got.counts())
	assert.Positive(t, counter(t, reader, "otelcol_receiver_kube_events_relist_fallbacks"), "the continue token expired")
	assert.Equal(t, int64(2), counter(t, reader, "otelcol_receiver_kube_events_relists"), "the start and the 410, never started over")
}

// failingLogs refuses every batch (a retryable error, as an exporter without a queue returns
// during a CloudWatch outage) while down is set, and passes the others to next.
type failingLogs struct {
	*consumertest.LogsSink
	down    atomic.Bool
	refused atomic.Int64
}

func (f *failingLogs) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if f.down.Load() {
		f.refused.Add(1)
		return errors.New("logs exporter down")
	}
	return f.LogsSink.ConsumeLogs(ctx, ld)
}

// TestEventsThroughLogsOutage is the "logs exporter outage" row of design.md rule 11: while the
// logs consumer refuses, the term retries the batch with backoff and the checkpoint does not
// move; after recovery every Event written meanwhile arrives once, none is lost or repeated.
func TestEventsThroughLogsOutage(t *testing.T) {
	cluster, client := apiServer(t)
	storeID, mem, host := memHost(nil)
	reader := sdkmetric.NewManualReader()
	set := receivertest.NewNopSettings(metadata.Type)
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	sink := &failingLogs{LogsSink: &consumertest.LogsSink{}}
	got := seen{sink.LogsSink}
	r, err := newReceiver(set, testReceiverConfig(cluster.Kubeconfig, &storeID))
	require.NoError(t, err)
	r.nextLogs = sink
	require.NoError(t, r.Start(context.Background(), host))
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()
	waitCheckpoint(t, mem)
	stored := func() string {
		v, err := memClient{mem}.Get(context.Background(), checkpointKey)
		require.NoError(t, err)
		cp, err := decodeCheckpoint(v)
		require.NoError(t, err)
		return cp.ResourceVersions[""]
	}

	createEvents(t, client, "Before", 5)
	require.Eventually(t, func() bool { return got.counts()["Before singleton"] == 5 }, 20*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return !rvAbove(newestEventRV(t, client), stored()) }, 20*time.Second, 20*time.Millisecond)
	at := stored()

	sink.down.Store(true)
	createEvents(t, client, "During", 10)
	require.Eventually(t, func() bool { return sink.refused.Load() >= 3 }, 30*time.Second, 20*time.Millisecond, "retried")
	assert.Equal(t, at, stored(), "the checkpoint waits for the logs consumer")
	assert.Zero(t, got.counts()["During singleton"])
	sink.down.Store(false)

	want := map[string]int{"Before singleton": 5, "During singleton": 10}
	require.Eventually(t, func() bool { return equalCounts(got.counts(), want) }, 30*time.Second, 20*time.Millisecond, "counts %v", got.counts())
	require.Never(t, func() bool { return !equalCounts(got.counts(), want) }, time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool { return !rvAbove(newestEventRV(t, client), stored()) }, 20*time.Second, 20*time.Millisecond, "the checkpoint moves on")
	assert.GreaterOrEqual(t, counter(t, reader, "otelcol_receiver_kube_events_consumer_errors"), sink.refused.Load())
}

// newestEventRV is the highest resource version among the Events in default.
func newestEventRV(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	l, err := client.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	newest := "0"
	for i := range l.Items {
		if rvAbove(l.Items[i].ResourceVersion, newest) {
			newest = l.Items[i].ResourceVersion
		}
	}
	return newest
}

// TestConsumerRetryResumesSoon: a refused batch of records or spans is resent on
// consumer_retry's pace, not on the API client's backoff (minutes, for lists and watches), so
// delivery resumes within consumer_retry.max_interval of an exporter outage's end.
func TestConsumerRetryResumesSoon(t *testing.T) {
	cluster, client := apiServer(t)
	storeID, mem, host := memHost(nil)
	cfg := testReceiverConfig(cluster.Kubeconfig, &storeID)
	cfg.Client.Backoff = BackoffConfig{InitialInterval: 2 * time.Minute, MaxInterval: 5 * time.Minute}
	cfg.ConsumerRetry = BackoffConfig{InitialInterval: 50 * time.Millisecond, MaxInterval: 200 * time.Millisecond}
	ctx := context.Background()
	set := receivertest.NewNopSettings(metadata.Type)
	logs := &failingLogs{LogsSink: &consumertest.LogsSink{}}
	traces := &blockedTraces{sink: &consumertest.TracesSink{}, release: make(chan struct{}), failing: true}
	lr := startLogsAndTraces(t, set, cfg, host, logs, traces.consumer())
	defer func() { require.NoError(t, lr.Shutdown(ctx)) }()
	release := sync.OnceFunc(func() { close(traces.release) })
	defer release() // before the shutdown, which waits for the queued spans
	waitCheckpoint(t, mem)

	logs.down.Store(true)
	createEvents(t, client, "Outage", 5)
	require.Eventually(t, func() bool { return logs.refused.Load() >= 3 }, 20*time.Second, 20*time.Millisecond, "records resent")
	logs.down.Store(false)
	got := seen{logs.LogsSink}
	require.Eventually(t, func() bool { return got.counts()["Outage singleton"] == 5 }, 10*time.Second, 20*time.Millisecond, "records after recovery")
	require.Eventually(t, func() bool { return traces.attempts.Load() >= 3 }, 10*time.Second, 20*time.Millisecond, "spans resent")
	release()
	if !assert.Eventually(t, func() bool { return spanCounts(traces.sink)["Outage singleton"] == 5 }, 10*time.Second, 20*time.Millisecond, "spans after recovery") {
		t.Fatalf("spans %v after %d attempts; records %v", spanCounts(traces.sink), traces.attempts.Load(), got.counts())
	}
}
