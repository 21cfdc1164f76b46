// SPDX-License-Identifier: Apache-2.0

package crosscomponent

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-k8s/otelcol-k8s/extension/tracecontextextension"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
)

// traceContextID is the id the components name the extension by.
var traceContextID = component.MustNewID("trace_context")

// apiServer starts the local API server (bin/kube-local; the test skips without it, and fails
// under CI=true) and returns it with a client.
func apiServer(tb testing.TB) (*kubecluster.Cluster, kubernetes.Interface) {
	tb.Helper()
	cluster := kubecluster.Start(tb)
	restCfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(tb, err)
	restCfg.QPS, restCfg.Burst = 500, 1000 // the benchmark creates thousands of objects
	client, err := kubernetes.NewForConfig(restCfg)
	require.NoError(tb, err)
	return cluster, client
}

// ensureNamespace creates ns with the service account Pods are admitted under (the local API
// server runs no controller that would create it).
func ensureNamespace(tb testing.TB, client kubernetes.Interface, ns string) {
	tb.Helper()
	ctx := context.Background()
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(tb, err)
	}
	_, err = client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(tb, err)
	}
}

// startTraceContext starts the trace_context extension as the factory makes it, on the API
// server of kubeconfig; nodeName scopes it to one node as the DaemonSet runs it ("" is the
// cluster-wide scope of the events Deployment). Start returns once the watches have listed.
func startTraceContext(tb testing.TB, kubeconfig, nodeName string) component.Component {
	tb.Helper()
	f := tracecontextextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*tracecontextextension.Config)
	cfg.Kubeconfig, cfg.NodeName = kubeconfig, nodeName
	cfg.MaxObjects = 100_000
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(tb, err)
	require.NoError(tb, ext.Start(context.Background(), componenttest.NewNopHost()))
	tb.Cleanup(func() { require.NoError(tb, ext.Shutdown(context.Background())) })
	return ext
}

// host is a component host holding the given extensions.
type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }
