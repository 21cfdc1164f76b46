package objectref

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparser"
	"github.com/otelcol-k8s/otelcol-k8s/processor/objectref"
)

// formatSpecific are attributes the klog parser writes differently for the text and JSON lines
// of one call (header fields, verbosity, the format itself).
func formatSpecific(key string) bool {
	return key == "thread.id" || strings.HasPrefix(key, "code.") || strings.HasPrefix(key, "klog.")
}

// TestTextAndJSONLinesConverge logs each call with the real klog text logger and the real
// component-base JSON logger, runs both lines through klog_parser then object_ref, and checks
// that the records agree on every attribute but the format-specific ones.
func TestTextAndJSONLinesConverge(t *testing.T) {
	text, json := klogLines(t)
	sink := new(consumertest.LogsSink)
	p := newPipeline(t, sink)
	require.NoError(t, p.ConsumeLogs(context.Background(), batch(text, 1)))
	require.NoError(t, p.ConsumeLogs(context.Background(), batch(json, 1)))
	got := sink.AllLogs()
	require.Len(t, got, 2)
	textRecs := got[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	jsonRecs := got[1].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()

	want := map[string]map[string]any{
		"scheduler bind":    {"pod": "default/web-7d4b9c8f6-x2x9k", "node": "node-12", "k8s.pod.name": "web-7d4b9c8f6-x2x9k", "k8s.node.name": "node-12", "k8s.namespace.name": "default"},
		"kubelet status":    {"pod": "default/web-7d4b9c8f6-x2x9k", "k8s.pod.name": "web-7d4b9c8f6-x2x9k", "k8s.pod.uid": podUID, "k8s.namespace.name": "default"},
		"garbage collector": {"object": "kube-system/coredns-5d78c9869d", "k8s.replicaset.name": "coredns-5d78c9869d", "k8s.replicaset.uid": "8c6f2a55-1b51-4d9b-8d76-3f3c2f6a6f0e", "k8s.namespace.name": "kube-system"},
		"event recorder":    {"object": "default/web-7d4b9c8f6-x2x9k", "k8s.pod.name": "web-7d4b9c8f6-x2x9k", "k8s.namespace.name": "default"},
		"struct reference": {"involvedObject": map[string]any{
			"kind": "Pod", "namespace": "default", "name": "web-7d4b9c8f6-x2x9k",
			"uid": podUID, "apiVersion": "v1", "resourceVersion": "4711",
		}, "k8s.pod.name": "web-7d4b9c8f6-x2x9k", "k8s.pod.uid": podUID, "k8s.namespace.name": "default"},
		"replica set error":               {"replicaSet": "kube-system/coredns-5d78c9869d", "k8s.replicaset.name": "coredns-5d78c9869d", "k8s.namespace.name": "kube-system"},
		"lease":                           {"lease": "kube-system/kube-scheduler", "otelcol_k8s.lease.name": "kube-scheduler", "k8s.namespace.name": "kube-system"},
		"node only":                       {"node": "node-12", "k8s.node.name": "node-12"},
		"apiserver access log":            {"verb": "GET"},
		"namespace without pod namespace": {},
	}
	for i, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			a := textRecs.At(i).Attributes().AsRaw()
			b := jsonRecs.At(i).Attributes().AsRaw()
			for k := range a {
				if formatSpecific(k) {
					delete(a, k)
				}
			}
			for k := range b {
				if formatSpecific(k) {
					delete(b, k)
				}
			}
			if c.name != "namespace without pod namespace" { // rejected: each keeps its own spelling
				assert.Equal(t, a, b, "text line %s\njson line %s", text[i], json[i])
			}
			assert.Equal(t, textRecs.At(i).Body().AsRaw(), jsonRecs.At(i).Body().AsRaw())
			w, ok := want[c.name]
			require.True(t, ok)
			for k, v := range w {
				assert.Equal(t, v, a[k], "%s in %s", k, text[i])
			}
			for k := range a {
				if strings.HasPrefix(k, "k8s.") || strings.HasPrefix(k, "otelcol_k8s.") {
					_, expected := w[k]
					assert.True(t, expected, "unexpected %s=%v", k, a[k])
				}
			}
		})
	}
	// The reference klog.KRef("", "orphan-1") is ambiguous for a pod: left as it was.
	assert.Equal(t, "orphan-1", textRecs.At(8).Attributes().AsRaw()["pod"])
	assert.Equal(t, map[string]any{"name": "orphan-1"}, jsonRecs.At(8).Attributes().AsRaw()["pod"])
}

// TestAttributesPrefix checks object_ref's key_prefix against klog_parser's attributes_prefix.
func TestAttributesPrefix(t *testing.T) {
	text, json := klogLines(t)
	sink := new(consumertest.LogsSink)
	orFactory := objectref.NewFactory()
	orCfg := orFactory.CreateDefaultConfig().(*objectref.Config)
	orCfg.KeyPrefix = "klog."
	kpFactory := klogparser.NewFactory()
	kpCfg := kpFactory.CreateDefaultConfig().(*klogparser.Config)
	kpCfg.AttributesPrefix = "klog."
	p := newConfiguredProcessor(t, kpFactory, kpCfg, newConfiguredProcessor(t, orFactory, orCfg, sink))
	require.NoError(t, p.ConsumeLogs(context.Background(), batch([]string{text[0], json[0]}, 1)))
	recs := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := 0; i < recs.Len(); i++ {
		attrs := recs.At(i).Attributes().AsRaw()
		assert.Equal(t, "default/web-7d4b9c8f6-x2x9k", attrs["klog.pod"])
		assert.Equal(t, "web-7d4b9c8f6-x2x9k", attrs["k8s.pod.name"])
		assert.Equal(t, "node-12", attrs["k8s.node.name"])
		assert.Equal(t, "default", attrs["k8s.namespace.name"])
	}
}
