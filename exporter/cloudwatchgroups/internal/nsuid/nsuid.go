// SPDX-License-Identifier: Apache-2.0

// Package nsuid maps namespace names to namespace UIDs by watching the namespaces of the
// Kubernetes API (metadata only). Container log paths carry the namespace name but not its
// UID, and contrib's k8s_attributes processor does not extract k8s.namespace.uid.
package nsuid

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient"
)

var namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Watcher keeps a namespace name → UID map current.
type Watcher struct {
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
	done     chan struct{}
}

// Client returns a metadata client: in-cluster (service account) when kubeconfig is empty,
// otherwise from the kubeconfig file.
func Client(kubeconfig string) (metadata.Interface, error) {
	cfg, err := kubeclient.RestConfig(kubeclient.Options{Kubeconfig: kubeconfig, UserAgent: "otelcol-k8s/cloudwatch_groups"})
	if err != nil {
		return nil, err
	}
	return metadata.NewForConfig(cfg)
}

// Start lists and then watches namespaces, and waits up to syncTimeout for the first list.
func Start(ctx context.Context, client metadata.Interface, syncTimeout time.Duration) (*Watcher, error) {
	inf := metadatainformer.NewFilteredMetadataInformer(client, namespaces, metav1.NamespaceAll, 10*time.Minute, cache.Indexers{}, nil).Informer()
	runCtx, cancel := context.WithCancel(context.Background())
	w := &Watcher{informer: inf, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		inf.RunWithContext(runCtx)
	}()
	syncCtx, syncCancel := context.WithTimeout(ctx, syncTimeout)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		w.Stop()
		return nil, errors.New("namespace watch: first list did not complete in time")
	}
	return w, nil
}

// UID returns the UID of the namespace called name.
func (w *Watcher) UID(name string) (string, bool) {
	obj, ok, err := w.informer.GetStore().GetByKey(name)
	if err != nil || !ok {
		return "", false
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok || m.UID == "" {
		return "", false
	}
	return string(m.UID), true
}

// Stop ends the watch.
func (w *Watcher) Stop() {
	w.cancel()
	<-w.done
}
