// SPDX-License-Identifier: Apache-2.0

package kubeclient

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options say how to reach the API server.
type Options struct {
	// Kubeconfig is a kubeconfig file; empty means the in-cluster service account.
	Kubeconfig string
	// QPS and Burst are client-go's client-side rate limit; zero keeps client-go's defaults
	// (5 and 10).
	QPS   float32
	Burst int
	// UserAgent names the component in the API server's audit log and metrics, such as
	// "otelcol-k8s/kube_events"; empty keeps client-go's default.
	UserAgent string
}

// RestConfig returns the client configuration for o.
func RestConfig(o Options) (*rest.Config, error) {
	var (
		rc  *rest.Config
		err error
	)
	if o.Kubeconfig == "" {
		rc, err = rest.InClusterConfig()
	} else {
		rc, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes client configuration: %w", err)
	}
	if o.QPS > 0 {
		rc.QPS = o.QPS
	}
	if o.Burst > 0 {
		rc.Burst = o.Burst
	}
	if o.UserAgent != "" {
		rc.UserAgent = o.UserAgent
	}
	return rc, nil
}
