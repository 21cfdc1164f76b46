// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeClient returns a client-go clientset for the API server of kubeconfig (a test's
// kubecluster) allowing qps requests a second with bursts of burst (0 and 0: client-go's
// defaults, 5 and 10). It fails tb when the kubeconfig cannot be used.
func KubeClient(tb testing.TB, kubeconfig string, qps float32, burst int) kubernetes.Interface {
	tb.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	rc.QPS, rc.Burst = qps, burst
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		tb.Fatal(err)
	}
	return client
}
