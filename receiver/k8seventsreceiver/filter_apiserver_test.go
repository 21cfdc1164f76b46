// SPDX-License-Identifier: Apache-2.0

package k8seventsreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
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
	written := []string{"NodeNotReady", "Scheduled", "Noisy", "BackOff"}
	rec.Eventf(node, nil, corev1.EventTypeWarning, "NodeNotReady", "Check", "node is not ready") // field selector
	rec.Eventf(web, nil, corev1.EventTypeNormal, "Scheduled", "Bind", "assigned")                // include: type
	rec.Eventf(web, nil, corev1.EventTypeWarning, "Noisy", "Probe", "probe failed")              // exclude: reason
	rec.Eventf(web, nil, corev1.EventTypeWarning, "BackOff", "Restart", "back-off")              // kept
	// The recorder writes asynchronously and in order; wait until all four exist.
	require.Eventually(t, func() bool {
		l, err := client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == len(written)
	}, 20*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return got.counts()["BackOff singleton"] == 1 }, 20*time.Second, 20*time.Millisecond)
	// A last kept Event written after all the others: once it arrives, nothing else is coming.
	rec.Eventf(web, nil, corev1.EventTypeWarning, "Killing", "Kill", "stopping")
	require.Eventually(t, func() bool { return got.counts()["Killing singleton"] == 1 }, 20*time.Second, 20*time.Millisecond)
	assert.Equal(t, map[string]int{"BackOff singleton": 1, "Killing singleton": 1}, got.counts())
}
