// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

// memStorage is a storage extension keeping its data in memory, shared by the receivers of a
// test (a restart keeps the data, as file_storage does).
type memStorage struct {
	mu   sync.Mutex
	data map[string][]byte
}

func (m *memStorage) Start(context.Context, component.Host) error { return nil }
func (m *memStorage) Shutdown(context.Context) error              { return nil }
func (m *memStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return memClient{m}, nil
}

type memClient struct{ m *memStorage }

func (c memClient) Get(_ context.Context, k string) ([]byte, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	return c.m.data[k], nil
}

func (c memClient) Set(_ context.Context, k string, v []byte) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.data[k] = append([]byte(nil), v...)
	return nil
}

func (c memClient) Delete(_ context.Context, k string) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	delete(c.m.data, k)
	return nil
}

func (c memClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value, _ = c.Get(ctx, op.Key)
		case storage.Set:
			_ = c.Set(ctx, op.Key, op.Value)
		case storage.Delete:
			_ = c.Delete(ctx, op.Key)
		}
	}
	return nil
}
func (c memClient) Close(context.Context) error { return nil }

type hostWith struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h hostWith) GetExtensions() map[component.ID]component.Component { return h.ext }

// seen is the records a test received, by "uid state".
type seen struct {
	sink *consumertest.LogsSink
}

// fromAPIServer reports whether a record's or span's attributes are of an Event the API server
// wrote itself (kubecluster.FromAPIServer).
func fromAPIServer(m pcommon.Map) bool {
	v, _ := m.Get(attr.EventReportingController)
	return kubecluster.FromAPIServer(v.AsString())
}

// records is every record of the Events the test wrote (not the API server's own).
func (s seen) records() []plog.LogRecord {
	var out []plog.LogRecord
	for _, lr := range s.all() {
		if !fromAPIServer(lr.Attributes()) {
			out = append(out, lr)
		}
	}
	return out
}

// all is every record, the API server's own Events' too.
func (s seen) all() []plog.LogRecord {
	var out []plog.LogRecord
	for _, l := range s.sink.AllLogs() {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			sls := l.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					out = append(out, lrs.At(k))
				}
			}
		}
	}
	return out
}

func str(lr plog.LogRecord, k string) string {
	v, _ := lr.Attributes().Get(k)
	return v.AsString()
}

// counts is how many records each "reason state" got.
func (s seen) counts() map[string]int {
	out := map[string]int{}
	for _, lr := range s.records() {
		out[str(lr, attr.EventReason)+" "+str(lr, attr.EventSeriesState)]++
	}
	return out
}

func (s seen) byUIDState() map[string]int {
	out := map[string]int{}
	for _, lr := range s.records() {
		out[str(lr, attr.EventUID)+" "+str(lr, attr.EventSeriesState)]++
	}
	return out
}

func testReceiverConfig(kubeconfig string, store *component.ID) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Kubeconfig = kubeconfig
	cfg.ClusterName = "test"
	cfg.Storage = store
	cfg.Series.FinishAfter = 3 * time.Second
	cfg.Series.SweepInterval = 100 * time.Millisecond
	cfg.Client.QPS, cfg.Client.Burst = 50, 100
	cfg.Client.Backoff.InitialInterval = 100 * time.Millisecond
	cfg.Client.Backoff.MaxInterval = time.Second
	cfg.ConsumerRetry = cfg.Client.Backoff
	return cfg
}

func startReceiver(t *testing.T, cfg *Config, host component.Host, sink *consumertest.LogsSink) *kubeEventsReceiver {
	t.Helper()
	r, err := newReceiver(receivertest.NewNopSettings(metadata.Type), cfg)
	r.nextLogs = sink
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), host))
	return r
}

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
	}
}

// seriesPatch writes series as the new recorder's heartbeat and final writes do (a strategic
// merge patch of series only).
func seriesPatch(t *testing.T, client kubernetes.Interface, ns, name string, count int32, last time.Time) {
	t.Helper()
	patch := fmt.Sprintf(`{"series":{"count":%d,"lastObservedTime":%q}}`, count, last.UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
	_, err := client.EventsV1().Events(ns).Patch(context.Background(), name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
}

func findEvent(t *testing.T, client kubernetes.Interface, ns, reason string) *eventsv1.Event {
	t.Helper()
	var found *eventsv1.Event
	require.Eventually(t, func() bool {
		l, err := client.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "reason=" + reason})
		if err != nil || len(l.Items) != 1 {
			return false
		}
		found = &l.Items[0]
		return true
	}, 20*time.Second, 50*time.Millisecond)
	return found
}

// TestRecordersAgainstAPIServer drives client-go's own recorders (tools/events and tools/record)
// and raw creates of both API versions against a real kube-apiserver, restarts the receiver in
// the middle, and counts every record: each Event and each series transition exactly once.
func TestRecordersAgainstAPIServer(t *testing.T) {
	cluster, client := apiServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ns = "default"

	storeID, mem, host := memHost(nil)
	sink := &consumertest.LogsSink{}
	got := seen{sink}
	cfg := testReceiverConfig(cluster.Kubeconfig, &storeID)
	r := startReceiver(t, cfg, host, sink)
	// The first start lists (emitting nothing: there is no checkpoint) and saves the list's
	// resource version; what is created after that arrives through the watch.
	waitCheckpoint(t, mem)
	_, err := client.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: ns},
		EventTime:  metav1.NowMicro(), ReportingController: "test/probe", ReportingInstance: "probe-1",
		Action: "Probe", Reason: "Probe", Type: "Normal", Note: "watch is up",
		Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: "probe", UID: "uid-probe"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return got.counts()["Probe singleton"] == 1 }, 30*time.Second, 20*time.Millisecond)

	// The new recorder: a singleton, then its series PATCH (count 2).
	nb := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	require.NoError(t, nb.StartRecordingToSinkWithContext(ctx))
	defer nb.Shutdown()
	newRec := nb.NewRecorder(scheme.Scheme, "test/new-recorder")
	web := pod(ns, "web-0")
	newRec.Eventf(web, nil, corev1.EventTypeWarning, "BackOff", "Restart", "Back-off restarting failed container")
	require.Eventually(t, func() bool { return got.counts()["BackOff singleton"] == 1 }, 20*time.Second, 20*time.Millisecond)
	newRec.Eventf(web, nil, corev1.EventTypeWarning, "BackOff", "Restart", "Back-off restarting failed container")
	require.Eventually(t, func() bool { return got.counts()["BackOff start"] == 1 }, 20*time.Second, 20*time.Millisecond)
	backoff := findEvent(t, client, ns, "BackOff")
	require.NotNil(t, backoff.Series)
	assert.Equal(t, int32(2), backoff.Series.Count)

	// The recorder's heartbeat (its 30-minute timer driven by hand, same PATCH).
	seriesPatch(t, client, ns, backoff.Name, 40, time.Now())
	require.Eventually(t, func() bool { return got.counts()["BackOff ongoing"] == 1 }, 20*time.Second, 20*time.Millisecond)

	// The legacy recorder: create with count 1, then a count PATCH per repeat.
	lb := record.NewBroadcaster()
	lb.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	defer lb.Shutdown()
	legacyRec := lb.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: "node-1"})
	api := pod(ns, "api-0")
	legacyRec.Event(api, corev1.EventTypeWarning, "LegacyBackOff", "Back-off restarting failed container")
	require.Eventually(t, func() bool { return got.counts()["LegacyBackOff singleton"] == 1 }, 20*time.Second, 20*time.Millisecond)
	for i := 0; i < 4; i++ {
		legacyRec.Event(api, corev1.EventTypeWarning, "LegacyBackOff", "Back-off restarting failed container")
	}
	require.Eventually(t, func() bool {
		e := findEvent(t, client, ns, "LegacyBackOff")
		return e.DeprecatedCount == 5
	}, 20*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool { return got.counts()["LegacyBackOff start"] == 1 }, 20*time.Second, 20*time.Millisecond)

	// Raw creates: a core/v1 Event already counted 3 (a legacy series first seen as such), read
	// through events.k8s.io/v1.
	_, err = client.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: "raw-", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "node-1", UID: "node-1"},
		Reason:         "RawLegacy", Message: "raw legacy", Type: "Normal", Count: 3,
		Source:         corev1.EventSource{Component: "node-controller"},
		FirstTimestamp: metav1.NewTime(time.Now().Add(-time.Minute)), LastTimestamp: metav1.Now(),
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return got.counts()["RawLegacy start"] == 1 }, 20*time.Second, 20*time.Millisecond)

	// Restart while things happen.
	require.NoError(t, r.Shutdown(ctx))
	newRec.Eventf(pod(ns, "db-0"), nil, corev1.EventTypeNormal, "Scheduled", "Bind", "Successfully assigned")
	backoffNow := findEvent(t, client, ns, "Scheduled")
	require.NotEmpty(t, backoffNow.Name)
	// the new recorder's final write for BackOff, while nobody watches
	seriesPatch(t, client, ns, backoff.Name, 55, time.Now().Add(-7*time.Minute))
	r = startReceiver(t, cfg, host, sink)
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()

	require.Eventually(t, func() bool {
		c := got.counts()
		return c["Scheduled singleton"] == 1 && c["BackOff finished"] == 1 && c["LegacyBackOff finished"] == 1 &&
			c["RawLegacy finished"] == 1
	}, 30*time.Second, 20*time.Millisecond, "counts: %v", got.counts())

	want := map[string]int{
		"Probe singleton":   1,
		"BackOff singleton": 1, "BackOff start": 1, "BackOff ongoing": 1, "BackOff finished": 1,
		"LegacyBackOff singleton": 1, "LegacyBackOff start": 1, "LegacyBackOff finished": 1,
		"RawLegacy start": 1, "RawLegacy finished": 1,
		"Scheduled singleton": 1,
	}
	// nothing more arrives: every record exactly once (the sweep runs every 100ms)
	require.Never(t, func() bool { return !equalCounts(got.counts(), want) }, 2*time.Second, 100*time.Millisecond, "counts: %v", got.counts())
	assert.Equal(t, want, got.counts())
	for k, n := range got.byUIDState() {
		assert.Equal(t, 1, n, k)
	}

	// The record fields, from the legacy shape and from the new API alike.
	for _, lr := range got.records() {
		switch str(lr, attr.EventReason) + " " + str(lr, attr.EventSeriesState) {
		case "BackOff finished":
			assert.Equal(t, plog.SeverityNumberWarn, lr.SeverityNumber())
			assert.Equal(t, attr.EventRecordName, lr.EventName())
			assert.Equal(t, "Back-off restarting failed container", lr.Body().Str())
			assert.Equal(t, "test/new-recorder", str(lr, attr.EventReportingController))
			assert.Equal(t, "Pod", str(lr, attr.ObjectKind))
			assert.Equal(t, "web-0", str(lr, attr.ObjectName))
			assert.Equal(t, ns, str(lr, attr.ObjectNamespace))
			assert.Equal(t, "uid-web-0", str(lr, attr.ObjectUID))
			v, _ := lr.Attributes().Get(attr.EventCount)
			assert.Equal(t, int64(55), v.Int())
		case "LegacyBackOff finished":
			assert.Equal(t, "kubelet", str(lr, attr.EventReportingController))
			assert.Equal(t, "node-1", str(lr, attr.EventReportingInstance))
			v, _ := lr.Attributes().Get(attr.EventCount)
			assert.Equal(t, int64(5), v.Int())
			b, _ := lr.Attributes().Get(attr.EventLegacy)
			assert.True(t, b.Bool())
		case "RawLegacy start":
			// Node uid equal to its name is dropped by the object model; cluster-scoped, no namespace
			assert.Equal(t, "Node", str(lr, attr.ObjectKind))
			assert.Equal(t, "node-1", str(lr, attr.ObjectName))
			_, hasUID := lr.Attributes().Get(attr.ObjectUID)
			assert.False(t, hasUID)
			assert.Equal(t, "node-controller", str(lr, attr.EventReportingController))
		}
	}
	rl := sink.AllLogs()[0].ResourceLogs().At(0).Resource().Attributes()
	nsv, _ := rl.Get(attr.K8sNamespaceName)
	assert.Equal(t, ns, nsv.Str())
	cl, _ := rl.Get(attr.K8sClusterName)
	assert.Equal(t, "test", cl.Str())
}

// apiServer starts the local API server of testbed/kubecluster and returns a client for it.
func apiServer(t *testing.T) (*kubecluster.Cluster, kubernetes.Interface) {
	t.Helper()
	cluster := kubecluster.Start(t)
	restCfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(restCfg)
	require.NoError(t, err)
	return cluster, client
}

// memHost is a host with an in-memory storage extension (and extra extensions).
func memHost(extra map[component.ID]component.Component) (component.ID, *memStorage, hostWith) {
	id := component.MustNewID("mem")
	mem := &memStorage{data: map[string][]byte{}}
	ext := map[component.ID]component.Component{id: mem}
	for k, v := range extra {
		ext[k] = v
	}
	return id, mem, hostWith{Host: componenttest.NewNopHost(), ext: ext}
}

// waitCheckpoint waits for the first checkpoint: the first start listed (emitting nothing) and
// watches from the list's resource version.
func waitCheckpoint(t *testing.T, mem *memStorage) {
	t.Helper()
	require.Eventually(t, func() bool {
		v, _ := memClient{mem}.Get(context.Background(), checkpointKey)
		return len(v) > 0
	}, 60*time.Second, 20*time.Millisecond)
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
