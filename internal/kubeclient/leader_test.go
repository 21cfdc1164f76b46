// SPDX-License-Identifier: Apache-2.0

package kubeclient

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
)

func TestNewElectorDefaults(t *testing.T) {
	_, err := NewElector(nil, Lease{Namespace: "default"}, func(context.Context) {})
	require.ErrorContains(t, err, "lease name is required")
	_, err = NewElector(nil, Lease{Name: "x"}, func(context.Context) {})
	require.ErrorContains(t, err, "lease namespace not set")
}

// TestElectorHandover runs two electors on one Lease of a real kube-apiserver: only one leads at
// a time; when the leader's Run ends, its lead returns before the Lease is released (it still
// holds it while lead is stopping), then the other takes over.
func TestElectorHandover(t *testing.T) {
	cluster := kubecluster.Start(t)
	rc, err := RestConfig(Options{Kubeconfig: cluster.Kubeconfig, UserAgent: "otelcol-k8s/kubeclient-test"})
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	clients, err := NewClients(LeaseConfig(rc))
	require.NoError(t, err)

	var leading atomic.Int32 // replicas inside lead at once
	var maxLeading atomic.Int32
	led := map[string]*atomic.Bool{"a": {}, "b": {}}
	aStopping, aRelease := make(chan struct{}), make(chan struct{})
	start := func(identity string) (context.CancelFunc, *sync.WaitGroup) {
		e, err := NewElector(clients.Coordination, Lease{
			Name: "test", Namespace: "default", Identity: identity,
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond,
		}, func(ctx context.Context) {
			n := leading.Add(1)
			for m := maxLeading.Load(); n > m && !maxLeading.CompareAndSwap(m, n); m = maxLeading.Load() {
			}
			led[identity].Store(true)
			<-ctx.Done()
			if identity == "a" {
				close(aStopping)
				<-aRelease
			}
			leading.Add(-1)
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { e.Run(ctx) })
		return cancel, &wg
	}
	holder := func() string {
		l, err := client.CoordinationV1().Leases("default").Get(context.Background(), "test", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	stopA, wgA := start("a")
	require.Eventually(t, func() bool { return led["a"].Load() && holder() == "a" }, 30*time.Second, 20*time.Millisecond)
	stopB, wgB := start("b")
	defer func() { stopB(); wgB.Wait() }()
	require.Never(t, led["b"].Load, time.Second, 50*time.Millisecond)

	stopA()
	<-aStopping
	// a's lead has not returned: a must still hold the Lease.
	require.Never(t, func() bool { return holder() != "a" }, time.Second, 50*time.Millisecond)
	close(aRelease)
	wgA.Wait() // returns after lead returned and the Lease was released
	require.Eventually(t, func() bool { return led["b"].Load() && holder() == "b" }, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, int32(1), maxLeading.Load())
}

func TestLeaderElectionConfig(t *testing.T) {
	def := NewDefaultLeaderElectionConfig("events")
	require.NoError(t, def.Validate(), "disabled")
	def.Enabled = true
	require.NoError(t, def.Validate())
	for _, tt := range []struct {
		name string
		tune func(*LeaderElectionConfig)
		want string
	}{
		{"no name", func(c *LeaderElectionConfig) { c.LeaseName = "" }, "leader_election.lease_name must be set"},
		{"deadline above duration", func(c *LeaderElectionConfig) { c.RenewDeadline = 20 * time.Second }, "lease_duration > renew_deadline"},
		{"retry above deadline", func(c *LeaderElectionConfig) { c.RetryPeriod = 10 * time.Second }, "lease_duration > renew_deadline"},
		{"no retry", func(c *LeaderElectionConfig) { c.RetryPeriod = 0 }, "retry_period > 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := def
			tt.tune(&c)
			require.ErrorContains(t, c.Validate(), tt.want)
		})
	}
	l := def.Lease("own")
	require.Equal(t, Lease{Name: "events", Namespace: "own", LeaseDuration: DefaultLeaseDuration, RenewDeadline: DefaultRenewDeadline, RetryPeriod: DefaultRetryPeriod}, l)
	def.LeaseNamespace = "obs"
	require.Equal(t, "obs", def.Lease("own").Namespace)
}
