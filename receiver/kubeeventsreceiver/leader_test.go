// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

// TestLeaderHandover runs two receivers on one Lease (client-go leader election against a real
// kube-apiserver), both into one sink: only the leader emits; when it stops, the standby takes
// over from the shared checkpoint, and every Event is emitted exactly once across the handover.
func TestLeaderHandover(t *testing.T) {
	cluster := kubecluster.Start(t)
	restCfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(restCfg)
	require.NoError(t, err)
	ctx := context.Background()
	sink := &consumertest.LogsSink{}
	got := seen{sink}

	newReplica := func(identity string) *kubeEventsReceiver {
		cfg := testReceiverConfig(cluster.Kubeconfig, nil)
		cfg.LeaderElection = LeaderElectionConfig{
			Enabled: true, LeaseName: "events", LeaseNamespace: "default", Identity: identity,
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond,
		}
		return startReceiver(t, cfg, componenttest.NewNopHost(), sink)
	}
	holder := func() string {
		l, err := client.CoordinationV1().Leases("default").Get(ctx, "events", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	a := newReplica("a")
	require.Eventually(t, func() bool { return holder() == "a" }, 30*time.Second, 50*time.Millisecond)
	b := newReplica("b")
	defer func() { require.NoError(t, b.Shutdown(ctx)) }()
	// the leader's first list is checkpointed: later Events arrive through its watch
	require.Eventually(t, func() bool {
		cm, err := client.CoreV1().ConfigMaps("default").Get(ctx, "events-checkpoint", metav1.GetOptions{})
		return err == nil && len(cm.BinaryData[checkpointKey]) > 0
	}, 30*time.Second, 50*time.Millisecond)

	createEvents(t, client, "First", 10)
	require.Eventually(t, func() bool { return got.counts()["First singleton"] == 10 }, 20*time.Second, 20*time.Millisecond)

	require.NoError(t, a.Shutdown(ctx)) // releases the Lease after its watch stopped
	createEvents(t, client, "Handover", 10)
	require.Eventually(t, func() bool { return holder() == "b" }, 30*time.Second, 50*time.Millisecond)
	createEvents(t, client, "Second", 10)
	want := map[string]int{"First singleton": 10, "Handover singleton": 10, "Second singleton": 10}
	require.Eventually(t, func() bool { return equalCounts(got.counts(), want) }, 30*time.Second, 20*time.Millisecond, "counts %v", got.counts())
	require.Never(t, func() bool { return !equalCounts(got.counts(), want) }, time.Second, 50*time.Millisecond)
	for k, n := range got.byUIDState() {
		require.Equal(t, 1, n, k)
	}
}

// TestLeaderCutOff: the leader dies as far as the API server can tell (every request of it
// answered 429 through a proxy, its watch cut: it can neither renew the Lease nor watch), the
// standby takes over. The cut-off leader's term must have ended before the standby's began
// (client-go gives up after the renew deadline, shorter than the lease duration the standby
// waits), and every Event is emitted once: those written while the leader was cut off by the
// new leader, from the shared checkpoint.
func TestLeaderCutOff(t *testing.T) {
	cluster, client := apiServer(t)
	proxy := kubecluster.StartProxy(t, cluster)
	ctx := context.Background()
	sink := &consumertest.LogsSink{}
	got := seen{sink}
	core, logs := observer.New(zap.InfoLevel)

	newReplica := func(identity, kubeconfig string) *kubeEventsReceiver {
		cfg := testReceiverConfig(kubeconfig, nil)
		cfg.LeaderElection = LeaderElectionConfig{
			Enabled: true, LeaseName: "cut", LeaseNamespace: "default", Identity: identity,
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond,
		}
		set := receivertest.NewNopSettings(metadata.Type)
		set.Logger = zap.New(core)
		r, err := newReceiver(set, cfg)
		require.NoError(t, err)
		r.nextLogs = sink
		require.NoError(t, r.Start(ctx, componenttest.NewNopHost()))
		return r
	}
	holder := func() string {
		l, err := client.CoordinationV1().Leases("default").Get(ctx, "cut", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	a := newReplica("a", proxy.Kubeconfig)
	defer func() { require.NoError(t, a.Shutdown(ctx)) }()
	require.Eventually(t, func() bool { return holder() == "a" && proxy.OpenWatches() == 1 }, 30*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		cm, err := client.CoreV1().ConfigMaps("default").Get(ctx, "cut-checkpoint", metav1.GetOptions{})
		return err == nil && len(cm.BinaryData[checkpointKey]) > 0
	}, 30*time.Second, 50*time.Millisecond)
	b := newReplica("b", cluster.Kubeconfig)
	defer func() { require.NoError(t, b.Shutdown(ctx)) }()

	createEvents(t, client, "Before", 10)
	require.Eventually(t, func() bool { return got.counts()["Before singleton"] == 10 }, 20*time.Second, 20*time.Millisecond)
	// Its checkpoint past them, then the cut.
	require.Eventually(t, func() bool {
		return logs.FilterMessage("leading: watching Events").Len() == 1 && !checkpointBehind(t, client, "cut-checkpoint")
	}, 20*time.Second, 20*time.Millisecond)
	proxy.Throttle(1<<30, 1)
	require.Positive(t, proxy.DropWatches())
	createEvents(t, client, "During", 10)
	require.Eventually(t, func() bool { return holder() == "b" }, 30*time.Second, 50*time.Millisecond)
	createEvents(t, client, "After", 10)
	want := map[string]int{"Before singleton": 10, "During singleton": 10, "After singleton": 10}
	require.Eventually(t, func() bool { return equalCounts(got.counts(), want) }, 30*time.Second, 20*time.Millisecond, "counts %v", got.counts())
	require.Never(t, func() bool { return !equalCounts(got.counts(), want) }, time.Second, 50*time.Millisecond)
	for k, n := range got.byUIDState() {
		require.Equal(t, 1, n, k)
	}

	// The order of the terms, as the replicas logged them: a led, a stopped, then b led.
	var order []string
	for _, e := range logs.All() {
		if e.Message == "leading: watching Events" || e.Message == "not leading" {
			order = append(order, e.ContextMap()["identity"].(string)+" "+e.Message)
		}
	}
	require.Equal(t, []string{"a leading: watching Events", "a not leading", "b leading: watching Events"}, order)
	proxy.Throttle(0, 0)
}

// checkpointBehind reports whether the ConfigMap checkpoint is behind the newest Event.
func checkpointBehind(t *testing.T, client kubernetes.Interface, name string) bool {
	t.Helper()
	l, err := client.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	cm, err := client.CoreV1().ConfigMaps("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return true
	}
	cp, err := decodeCheckpoint(cm.BinaryData[checkpointKey])
	if err != nil || cp == nil {
		return true
	}
	for i := range l.Items {
		if rvAbove(l.Items[i].ResourceVersion, cp.ResourceVersions[""]) {
			return true
		}
	}
	return false
}
