// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"fmt"
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
	"k8s.io/client-go/tools/events"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// TestFiltersAgainstAPIServer: a field selector the API server applies (regarding.kind=Pod), an
// include list by type and an exclude list by reason the receiver applies, on Events written by
// client-go's new recorder. Only the Events passing all three become records; the watch
// delivers in order, so the last Event written arriving proves the earlier ones were seen.
func TestFiltersAgainstAPIServer(t *testing.T) {
	cluster, client := apiServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ns = "default"

	storeID, mem, host := memHost(nil)
	sink := &consumertest.LogsSink{}
	got := seen{sink}
	cfg := testReceiverConfig(cluster.Kubeconfig, &storeID)
	cfg.FieldSelector = "regarding.kind=Pod"
	cfg.Include = Filter{Types: []string{corev1.EventTypeWarning}}
	cfg.Exclude = Filter{Reasons: []string{"Noisy"}}
	r := startReceiver(t, cfg, host, sink)
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()
	waitCheckpoint(t, mem)

	nb := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	require.NoError(t, nb.StartRecordingToSinkWithContext(ctx))
	defer nb.Shutdown()
	rec := nb.NewRecorder(scheme.Scheme, "test/filters")
	web := pod(ns, "web-0")
	node := &corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "uid-node-1"}}
	// The recorder writes each Event from a goroutine of its own, and drops one the server
	// refuses (it retries only transport errors, after 10 s): each is written once the one
	// before it is in the API, so that none is lost to the order of writes, and a lost one
	// is named.
	writeAndWait(ctx, t, client, ns, "NodeNotReady", func() {
		rec.Eventf(node, nil, corev1.EventTypeWarning, "NodeNotReady", "Check", "node is not ready") // field selector
	})
	writeAndWait(ctx, t, client, ns, "Scheduled", func() {
		rec.Eventf(web, nil, corev1.EventTypeNormal, "Scheduled", "Bind", "assigned") // include: type
	})
	writeAndWait(ctx, t, client, ns, "Noisy", func() {
		rec.Eventf(web, nil, corev1.EventTypeWarning, "Noisy", "Probe", "probe failed") // exclude: reason
	})
	writeAndWait(ctx, t, client, ns, "BackOff", func() {
		rec.Eventf(web, nil, corev1.EventTypeWarning, "BackOff", "Restart", "back-off") // kept
	})
	require.Eventually(t, func() bool { return got.counts()["BackOff singleton"] == 1 }, 60*time.Second, 20*time.Millisecond)
	// A last kept Event written after all the others: once it arrives, nothing else is coming.
	rec.Eventf(web, nil, corev1.EventTypeWarning, "Killing", "Kill", "stopping")
	require.Eventually(t, func() bool { return got.counts()["Killing singleton"] == 1 }, 90*time.Second, 20*time.Millisecond)
	assert.Equal(t, map[string]int{"BackOff singleton": 1, "Killing singleton": 1}, got.counts())
}

// writeAndWait runs write (an events recorder's call) and waits until an Event with reason is
// in namespace ns, polling at a pace that leaves the client's rate limit to the recorder.
func writeAndWait(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, reason string, write func()) {
	t.Helper()
	write()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		l, err := client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		require.NoError(c, err)
		reasons := make([]string, 0, len(l.Items))
		for i := range l.Items {
			reasons = append(reasons, l.Items[i].Reason)
		}
		assert.Contains(c, reasons, reason, "the Events in %s", ns)
	}, 90*time.Second, 250*time.Millisecond)
}

// TestFieldSelectorsAgainstAPIServer: each field selector the README names, passed to the API
// server for events.k8s.io/v1 and, with its core/v1 spelling, for core/v1; one receiver per
// case, each in its own namespace, on the same Events (two written by client-go's new recorder,
// one created raw), then a marker matching the case's selector: the watch delivers in order, so
// once the marker arrived every earlier Event was seen or filtered.
func TestFieldSelectorsAgainstAPIServer(t *testing.T) {
	cluster, client := apiServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nb := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	require.NoError(t, nb.StartRecordingToSinkWithContext(ctx))
	defer nb.Shutdown()
	scheduler, kubelet := nb.NewRecorder(scheme.Scheme, "test/scheduler"), nb.NewRecorder(scheme.Scheme, "test/kubelet")
	type marker struct{ typ, reason, kind, controller string }
	tests := []struct {
		name     string
		api      API
		selector string
		marker   marker
		want     map[string]int
	}{
		{
			name: "type", api: APIEventsV1, selector: "type=Warning", marker: marker{"Warning", "Marker", "Pod", "test/marker"},
			want: map[string]int{"BackOff singleton": 1, "Stalled singleton": 1, "Marker singleton": 1},
		},
		{
			name: "reason", api: APIEventsV1, selector: "reason=Scheduled", marker: marker{"Normal", "Scheduled", "Pod", "test/marker"},
			want: map[string]int{"Scheduled singleton": 2},
		},
		{
			name: "regarding.kind", api: APIEventsV1, selector: "regarding.kind=Deployment", marker: marker{"Normal", "Marker", "Deployment", "test/marker"},
			want: map[string]int{"Stalled singleton": 1, "Marker singleton": 1},
		},
		{
			name: "reportingController", api: APIEventsV1, selector: "reportingController=test/scheduler", marker: marker{"Normal", "Marker", "Pod", "test/scheduler"},
			want: map[string]int{"Scheduled singleton": 1, "Marker singleton": 1},
		},
		{
			name: "two, one negated", api: APIEventsV1, selector: "type=Warning,reason!=BackOff", marker: marker{"Warning", "Marker", "Pod", "test/marker"},
			want: map[string]int{"Stalled singleton": 1, "Marker singleton": 1},
		},
		{
			name: "core/v1: involvedObject.kind", api: APICoreV1, selector: "involvedObject.kind=Pod", marker: marker{"Normal", "Marker", "Pod", "test/marker"},
			want: map[string]int{"Scheduled singleton": 1, "BackOff singleton": 1, "Marker singleton": 1},
		},
		{
			name: "core/v1: reportingComponent", api: APICoreV1, selector: "reportingComponent=test/kubelet", marker: marker{"Normal", "Marker", "Pod", "test/kubelet"},
			want: map[string]int{"BackOff singleton": 1, "Stalled singleton": 1, "Marker singleton": 1},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := fmt.Sprintf("selector-%d", i)
			_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			require.NoError(t, err)
			storeID, mem, host := memHost(nil)
			sink := &consumertest.LogsSink{}
			got := seen{sink}
			cfg := testReceiverConfig(cluster.Kubeconfig, &storeID)
			cfg.API = tt.api
			cfg.Namespaces = []string{ns}
			cfg.FieldSelector = tt.selector
			r := startReceiver(t, cfg, host, sink)
			defer func() { require.NoError(t, r.Shutdown(context.Background())) }()
			waitCheckpoint(t, mem)

			web := pod(ns, "web-0")
			// Each recorder write is in the API before the next (a write the server refuses is
			// dropped by the recorder: writeAndWait names it).
			writeAndWait(ctx, t, client, ns, "Scheduled", func() {
				scheduler.Eventf(web, nil, corev1.EventTypeNormal, "Scheduled", "Bind", "assigned")
			})
			writeAndWait(ctx, t, client, ns, "BackOff", func() {
				kubelet.Eventf(web, nil, corev1.EventTypeWarning, "BackOff", "Restart", "back-off")
			})
			create := func(name string, m marker) {
				regarding := corev1.ObjectReference{Kind: m.kind, APIVersion: "v1", Name: "web-0", Namespace: ns, UID: web.UID}
				if m.kind == "Deployment" {
					regarding = corev1.ObjectReference{Kind: "Deployment", APIVersion: "apps/v1", Name: "web", Namespace: ns, UID: "uid-deploy-web"}
				}
				_, err := client.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
					EventTime:  metav1.NewMicroTime(time.Now()), ReportingController: m.controller, ReportingInstance: "node-1",
					Action: "Check", Reason: m.reason, Type: m.typ, Note: name, Regarding: regarding,
				}, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			// A controller's Warning about a Deployment, then the marker.
			create("web.stalled", marker{"Warning", "Stalled", "Deployment", "test/kubelet"})
			create("marker", tt.marker)
			require.Eventually(t, func() bool {
				for _, lr := range got.records() {
					if str(lr, attr.EventName) == "marker" {
						return true
					}
				}
				return false
			}, 20*time.Second, 20*time.Millisecond, "%v", got.counts())
			assert.Equal(t, tt.want, got.counts())
		})
	}
}
