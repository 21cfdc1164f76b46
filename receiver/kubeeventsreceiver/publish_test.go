// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objevents"
)

// hubSource is a trace-context source with the Event hub, as trace_context is.
type hubSource struct {
	objevents.Hub
	component.StartFunc
	component.ShutdownFunc
}

func (*hubSource) SpanContextForObject(context.Context, string, string, string, string, string) (trace.SpanContext, bool, bool) {
	return trace.SpanContext{}, false, false
}

type hubRecorder struct {
	mu      sync.Mutex
	events  map[string]objevents.Event // by reason
	listed  map[string]bool
	leading []bool
}

func (r *hubRecorder) ObjectEvents(evs []objevents.Event, listed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range evs {
		r.events[ev.Reason] = ev
		r.listed[ev.Reason] = listed
	}
}

func (r *hubRecorder) Leading(l bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leading = append(r.leading, l)
}

func (r *hubRecorder) get(reason string) (objevents.Event, bool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev, ok := r.events[reason]
	return ev, r.listed[reason], ok
}

// TestPublishToHub: with a trace_context that has the Event hub, kube_events hands it every
// Event it receives, listed or watched, before its own filters (a filtered-out reason
// included), and says when its term starts and ends.
func TestPublishToHub(t *testing.T) {
	cluster, client := apiServer(t)
	ctx := context.Background()
	write := func(reason, controller string) {
		_, err := client.EventsV1().Events("default").Create(ctx, &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "ev-", Namespace: "default"},
			EventTime:  metav1.NowMicro(), ReportingController: controller, ReportingInstance: controller + "-1",
			Action: "Scale", Reason: reason, Type: corev1.EventTypeNormal, Note: "Scaled up replica set web-1 from 0 to 2",
			Regarding: corev1.ObjectReference{Kind: "Deployment", APIVersion: "apps/v1", Namespace: "default", Name: "web", UID: "uid-web"},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	write("Before", "deployment-controller") // in the first list

	hub := &hubSource{}
	rec := &hubRecorder{events: map[string]objevents.Event{}, listed: map[string]bool{}}
	unsubscribe := hub.SubscribeObjectEvents(rec)
	defer unsubscribe()
	extID := component.MustNewID("trace_context")
	storeID, _, host := memHost(map[component.ID]component.Component{extID: hub})
	cfg := testReceiverConfig(cluster.Kubeconfig, &storeID)
	cfg.TraceContext = &extID
	cfg.Exclude.Reasons = []string{"Filtered"}
	r := startReceiver(t, cfg, host, &consumertest.LogsSink{})

	require.Eventually(t, func() bool { _, _, ok := rec.get("Before"); return ok }, 20*time.Second, 20*time.Millisecond, "the listed Event")
	write("Filtered", "deployment-controller")
	write("After", "deployment-controller")
	require.Eventually(t, func() bool {
		_, _, a := rec.get("After")
		_, _, f := rec.get("Filtered")
		return a && f
	}, 20*time.Second, 20*time.Millisecond, "the watched Events, a filtered one included")

	ev, listed, _ := rec.get("Before")
	assert.True(t, listed)
	assert.Equal(t, objevents.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web", UID: "uid-web"}, ev.Regarding)
	assert.Equal(t, "deployment-controller", ev.ReportingController)
	assert.Equal(t, "Scaled up replica set web-1 from 0 to 2", ev.Note)
	assert.WithinDuration(t, time.Now(), ev.Time, time.Minute)
	_, listed, _ = rec.get("After")
	assert.False(t, listed)

	require.NoError(t, r.Shutdown(ctx))
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, []bool{true, false}, rec.leading, "a term's start and end")
}
