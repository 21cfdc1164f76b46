// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroups

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
)

// TestNamespaceUIDWatchAgainstAPIServer configures group_by namespace_uid with the exporter's
// own namespace watch on the kubeconfig of a real kube-apiserver (testbed/kubecluster): records
// of a namespace land in the group named with the UID the API server gave that namespace.
func TestNamespaceUIDWatchAgainstAPIServer(t *testing.T) {
	cluster := kubecluster.Start(t)
	restCfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	core, err := corev1client.NewForConfig(restCfg)
	require.NoError(t, err)
	ctx := context.Background()
	uid := map[string]string{}
	for _, name := range []string{"shop", "billing"} {
		ns, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		require.NoError(t, err)
		uid[name] = string(ns.UID)
	}

	awsEnv(t)
	b := startLocal(t, localConfig{})
	cfg := testConfig(b.endpoint)
	cfg.GroupBy = "namespace_uid"
	cfg.NamespaceUID.Watch = true
	cfg.NamespaceUID.Kubeconfig = cluster.Kubeconfig
	exp := newTestExporter(t, cfg, component.NewIDWithName(metadata.Type, "nsuid"), componenttest.NewNopHost())

	const host, perSource = "node-1", 20
	shop := source{namespace: "shop", pod: "web-1", container: "web"}
	billing := source{namespace: "billing", pod: "api-1", container: "api"}
	unknown := source{namespace: "not-in-cluster", pod: "job-1", container: "job"}
	system := source{namespace: "kube-system", pod: "coredns-1", container: "coredns"}
	require.NoError(t, exp.ConsumeLogs(ctx, makeLogs([]source{shop, billing, unknown, system}, perSource, time.Now(), host)))
	require.NoError(t, exp.Shutdown(ctx)) // drains the queue

	tests := []struct {
		name  string
		group string
		src   source
	}{
		{"namespace shop by its server-assigned UID", "it.namespace-uid/" + uid["shop"], shop},
		{"namespace billing by its server-assigned UID", "it.namespace-uid/" + uid["billing"], billing},
		{"namespace unknown to the cluster falls back to its name", "it.namespace/not-in-cluster", unknown},
		{"infrastructure namespace", "it.infrastructure", system},
	}
	want := map[string]bool{}
	for _, tt := range tests {
		want[tt.group] = true
		t.Run(tt.name, func(t *testing.T) {
			events, err := b.local.Events(tt.group, streamName(host, tt.src))
			require.NoError(t, err)
			assert.Len(t, events, perSource)
		})
	}
	for _, g := range b.local.Groups() {
		assert.True(t, want[g.Name], "unexpected group %s", g.Name)
	}
}
