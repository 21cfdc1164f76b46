// SPDX-License-Identifier: Apache-2.0

package k8seventsreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
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
		return err == nil && cm.Data[checkpointKey] != ""
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
