// SPDX-License-Identifier: Apache-2.0

package objectref

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor"
	"github.com/otelcol-k8s/otelcol-k8s/processor/objectrefprocessor"
)

// formatSpecific are attributes the klog parser writes differently for the text and JSON lines
// of one call (header fields, verbosity, the format itself).
func formatSpecific(key string) bool {
	return key == "thread.id" || strings.HasPrefix(key, "code.") || strings.HasPrefix(key, "otelcol_k8s.klog.")
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

	pod := func(extra ...any) map[string]any {
		m := map[string]any{
			"otelcol_k8s.object.kind": "Pod", "otelcol_k8s.object.api_version": "v1",
			"otelcol_k8s.object.namespace": "default", "otelcol_k8s.object.name": "web-7d4b9c8f6-x2x9k",
		}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	rs := map[string]any{
		"otelcol_k8s.object.kind": "ReplicaSet", "otelcol_k8s.object.api_version": "apps/v1",
		"otelcol_k8s.object.namespace": "kube-system", "otelcol_k8s.object.name": "coredns-5d78c9869d",
	}
	want := map[string]map[string]any{
		"scheduler bind":                  pod("pod", "default/web-7d4b9c8f6-x2x9k", "node", "node-12", "otelcol_k8s.object.refs", []any{"Node/node-12"}),
		"kubelet status":                  pod("pod", "default/web-7d4b9c8f6-x2x9k", "otelcol_k8s.object.uid", podUID),
		"garbage collector":               {"object": "kube-system/coredns-5d78c9869d", "otelcol_k8s.object.kind": "ReplicaSet", "otelcol_k8s.object.api_version": "apps/v1", "otelcol_k8s.object.namespace": "kube-system", "otelcol_k8s.object.name": "coredns-5d78c9869d", "otelcol_k8s.object.uid": "8c6f2a55-1b51-4d9b-8d76-3f3c2f6a6f0e"},
		"event recorder":                  pod("object", "default/web-7d4b9c8f6-x2x9k"),
		"struct reference":                pod("involvedObject", "default/web-7d4b9c8f6-x2x9k", "otelcol_k8s.object.uid", podUID, "otelcol_k8s.object.resource_version", "4711"),
		"replica set error":               rs,
		"lease":                           {"lease": "kube-system/kube-scheduler", "otelcol_k8s.object.kind": "Lease", "otelcol_k8s.object.api_version": "coordination.k8s.io/v1", "otelcol_k8s.object.namespace": "kube-system", "otelcol_k8s.object.name": "kube-scheduler"},
		"node only":                       {"node": "node-12", "otelcol_k8s.object.kind": "Node", "otelcol_k8s.object.api_version": "v1", "otelcol_k8s.object.name": "node-12"},
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
				if strings.HasPrefix(k, "k8s.") || strings.HasPrefix(k, "otelcol_k8s.") && !formatSpecific(k) {
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
	orFactory := objectrefprocessor.NewFactory()
	orCfg := orFactory.CreateDefaultConfig().(*objectrefprocessor.Config)
	orCfg.KeyPrefix = "klog."
	kpFactory := klogparserprocessor.NewFactory()
	kpCfg := kpFactory.CreateDefaultConfig().(*klogparserprocessor.Config)
	kpCfg.AttributesPrefix = "klog."
	p := newConfiguredProcessor(t, kpFactory, kpCfg, newConfiguredProcessor(t, orFactory, orCfg, sink))
	require.NoError(t, p.ConsumeLogs(context.Background(), batch([]string{text[0], json[0]}, 1)))
	recs := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := 0; i < recs.Len(); i++ {
		attrs := recs.At(i).Attributes().AsRaw()
		assert.Equal(t, "default/web-7d4b9c8f6-x2x9k", attrs["klog.pod"])
		assert.Equal(t, "web-7d4b9c8f6-x2x9k", attrs["otelcol_k8s.object.name"])
		assert.Equal(t, []any{"Node/node-12"}, attrs["otelcol_k8s.object.refs"])
		assert.Equal(t, "default", attrs["otelcol_k8s.object.namespace"])
	}
}
