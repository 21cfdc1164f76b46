// SPDX-License-Identifier: Apache-2.0

package kubeclient

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
)

// TestClients reads what the components read through Clients from a real kube-apiserver: typed
// Pods through an informer over the core client (list, then a watch event), a Deployment through
// the apps client, a missing object as a NotFound status, and Pods as metadata only.
func TestClients(t *testing.T) {
	cluster := kubecluster.Start(t)
	rc, err := RestConfig(Options{Kubeconfig: cluster.Kubeconfig, UserAgent: "otelcol-k8s/kubeclient-test"})
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	clients, err := NewClients(rc)
	require.NoError(t, err)
	ctx := t.Context()

	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "img"}}},
		}
	}
	// no controller manager: the ServiceAccount admission wants the namespace's default account
	_, err = cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Pods("default").Create(ctx, pod("first"), metav1.CreateOptions{})
	require.NoError(t, err)

	var mu sync.Mutex
	seen := map[string]string{} // name -> node
	lw := cache.NewFilteredListWatchFromClient(clients.Core, "pods", metav1.NamespaceAll, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", "node-1").String()
	})
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			p := obj.(*corev1.Pod)
			mu.Lock()
			seen[p.Name] = p.Spec.NodeName
			mu.Unlock()
		}},
	})
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { ctrl.RunWithContext(runCtx) })
	defer func() { stop(); wg.Wait() }()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), ctrl.HasSynced))
	_, err = cs.CoreV1().Pods("default").Create(ctx, pod("second"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen["first"] == "node-1" && seen["second"] == "node-1"
	}, 30*time.Second, 20*time.Millisecond)

	replicas := int32(0)
	_, err = cs.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}},
			},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	var d appsv1.Deployment
	require.NoError(t, clients.Apps.Get().Namespace("default").Resource("deployments").Name("web").Do(ctx).Into(&d))
	require.Equal(t, "web", d.Name)
	require.Equal(t, int32(0), *d.Spec.Replicas)

	err = clients.Coordination.Get().Namespace("default").Resource("leases").Name("none").Do(ctx).Into(&coordinationv1.Lease{})
	require.True(t, apierrors.IsNotFound(err), "want NotFound, got %v", err)

	meta, err := clients.Metadata.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace("default").Get(ctx, "first", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "web", meta.Labels["app"])
}

// TestElectorLosesLease: when another holder overwrites the Lease, the holder cannot renew
// within its renew deadline; lead's context ends, IsLeader turns false, and it campaigns again,
// taking the Lease back (a higher term) once the other stops renewing.
func TestElectorLosesLease(t *testing.T) {
	cluster := kubecluster.Start(t)
	rc, err := RestConfig(Options{Kubeconfig: cluster.Kubeconfig, UserAgent: "otelcol-k8s/kubeclient-test"})
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	clients, err := NewClients(LeaseConfig(rc))
	require.NoError(t, err)

	terms := make(chan context.Context, 4)
	e, err := NewElector(clients.Coordination, Lease{
		Name: "lose", Namespace: "default", Identity: "a",
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond,
	}, func(ctx context.Context) {
		terms <- ctx
		<-ctx.Done()
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { e.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()

	first := <-terms
	require.True(t, e.IsLeader())
	term, err := e.Term(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(0), term)

	// "b" takes the Lease over with a fresh renew time and keeps it fresh for a while.
	leases := cs.CoordinationV1().Leases("default")
	steal := func() error {
		l, err := leases.Get(ctx, "lose", metav1.GetOptions{})
		if err != nil {
			return err
		}
		b, now, transitions := "b", metav1.NewMicroTime(time.Now()), *l.Spec.LeaseTransitions+1
		l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.AcquireTime, l.Spec.LeaseTransitions = &b, &now, &now, &transitions
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err
	}
	require.Eventually(t, func() bool { return steal() == nil }, 10*time.Second, 10*time.Millisecond)
	stealing, stopStealing := context.WithCancel(ctx)
	var stealer sync.WaitGroup
	stealer.Go(func() {
		for stealing.Err() == nil {
			_ = steal()
			select {
			case <-stealing.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	})
	select {
	case <-first.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("lead's context did not end after the Lease was taken over")
	}
	require.Eventually(t, func() bool { return !e.IsLeader() }, 10*time.Second, 10*time.Millisecond)
	_, err = e.Term(ctx)
	require.ErrorIs(t, err, ErrNotHolder)

	stopStealing()
	stealer.Wait()
	select {
	case second := <-terms:
		require.NoError(t, second.Err())
	case <-time.After(30 * time.Second):
		t.Fatal("the elector did not take the expired Lease back")
	}
	term, err = e.Term(ctx)
	require.NoError(t, err)
	require.Greater(t, term, int64(1), "b's takeover and a's return each count a transition")
}
