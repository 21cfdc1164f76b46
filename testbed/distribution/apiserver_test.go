// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
)

// apiTest is where a test against the local API server starts: the server, a client and a
// context that ends at the test's deadline or with the test.
type apiTest struct {
	t       *testing.T
	cluster *kubecluster.Cluster
	kc      kubernetes.Interface
	ctx     context.Context
}

// startAPITest starts the local API server and creates each namespace with the default
// ServiceAccount that the controller manager (which does not run here) would create.
func startAPITest(t *testing.T, deadline time.Duration, namespaces ...string) *apiTest {
	t.Helper()
	cluster, kc := localAPIServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	a := &apiTest{t: t, cluster: cluster, kc: kc, ctx: ctx}
	for _, ns := range namespaces {
		if ns != "default" {
			a.must(kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))
		}
		a.must(kc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}))
	}
	return a
}

// must fails the test when a call that returns a value and an error failed.
func (a *apiTest) must(_ any, err error) {
	a.t.Helper()
	a.check(err)
}

// check fails the test on err.
func (a *apiTest) check(err error) {
	a.t.Helper()
	if err != nil {
		a.t.Fatal(err)
	}
}

// localAPIServer starts the local API server (kubecluster) and returns it with a client.
func localAPIServer(t *testing.T) (*kubecluster.Cluster, kubernetes.Interface) {
	t.Helper()
	cluster := kubecluster.Start(t)
	return cluster, harness.KubeClient(t, cluster.Kubeconfig, 0, 0)
}
