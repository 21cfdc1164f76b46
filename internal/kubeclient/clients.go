// SPDX-License-Identifier: Apache-2.0

package kubeclient

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// The API groups the components read, and nothing else. client-go's clientset and its typed
// clients (k8s.io/client-go/kubernetes/...) register every API group of Kubernetes in their
// scheme (k8s.io/client-go/kubernetes/scheme): importing one typed client compiles all of
// k8s.io/api and client-go's apply configurations. The REST clients here decode with a scheme
// of these groups only, so a binary links what it reads.
var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(appsv1.AddToScheme(scheme))
	utilruntime.Must(coordinationv1.AddToScheme(scheme))
	// Status, WatchEvent and the option types of the unversioned meta group.
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
}

// Clients are the clients of one API server configuration, built once and shared by what a
// component runs (informers over cache.NewListWatchFromClient, GETs, the Lease).
type Clients struct {
	// Core is the core/v1 group: Pods, Events, ConfigMaps, Namespaces.
	Core rest.Interface
	// Apps is apps/v1: Deployments, ReplicaSets, StatefulSets, DaemonSets.
	Apps rest.Interface
	// Coordination is coordination.k8s.io/v1: Leases.
	Coordination rest.Interface
	// Metadata reads and watches any resource as PartialObjectMetadata.
	Metadata metadata.Interface
}

// NewClients builds the clients of rc over one HTTP client (one connection pool).
func NewClients(rc *rest.Config) (*Clients, error) {
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes http client: %w", err)
	}
	var c Clients
	for _, g := range []struct {
		into    *rest.Interface
		gv      schema.GroupVersion
		apiPath string
	}{
		{&c.Core, corev1.SchemeGroupVersion, "/api"},
		{&c.Apps, appsv1.SchemeGroupVersion, "/apis"},
		{&c.Coordination, coordinationv1.SchemeGroupVersion, "/apis"},
	} {
		cfg := rest.CopyConfig(rc)
		cfg.GroupVersion = &g.gv
		cfg.APIPath = g.apiPath
		cfg.NegotiatedSerializer = codecs.WithoutConversion()
		if cfg.UserAgent == "" {
			cfg.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		rcl, err := rest.RESTClientForConfigAndClient(cfg, hc)
		if err != nil {
			return nil, fmt.Errorf("kubernetes %s client: %w", g.gv, err)
		}
		*g.into = rcl
	}
	if c.Metadata, err = metadata.NewForConfigAndClient(rc, hc); err != nil {
		return nil, fmt.Errorf("kubernetes metadata client: %w", err)
	}
	return &c, nil
}
