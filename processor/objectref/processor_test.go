package objectref

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-k8s/otelcol-k8s/processor/objectref/internal/k8sref"
	"github.com/otelcol-k8s/otelcol-k8s/processor/objectref/internal/metadata"
)

// harness runs records through a processor built by the factory, with real telemetry.
type harness struct {
	t    *testing.T
	tel  *componenttest.Telemetry
	proc processor.Logs
	sink *consumertest.LogsSink
}

func newHarness(t *testing.T, cfg *Config, host component.Host) *harness {
	t.Helper()
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	sink := new(consumertest.LogsSink)
	proc, err := NewFactory().CreateLogs(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	if host == nil {
		host = componenttest.NewNopHost()
	}
	require.NoError(t, proc.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, proc.Shutdown(context.Background())) })
	return &harness{t: t, tel: tel, proc: proc, sink: sink}
}

// run processes one record built from attrs (and body, when not nil) and returns it.
func (h *harness) run(attrs map[string]any, body map[string]any) plog.LogRecord {
	h.t.Helper()
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	require.NoError(h.t, lr.Attributes().FromRaw(attrs))
	if body != nil {
		require.NoError(h.t, lr.Body().SetEmptyMap().FromRaw(body))
	}
	h.sink.Reset()
	require.NoError(h.t, h.proc.ConsumeLogs(context.Background(), ld))
	got := h.sink.AllLogs()
	require.Len(h.t, got, 1)
	return got[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
}

// counter returns a counter's value for the given reason attribute ("" for none).
func (h *harness) counter(name, reason string) int64 {
	h.t.Helper()
	m, err := h.tel.GetMetric("otelcol_" + name)
	if err != nil {
		return 0
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(h.t, ok, "%s is not an int64 sum", name)
	var total int64
	for _, dp := range sum.DataPoints {
		v, has := dp.Attributes.Value(attribute.Key("reason"))
		if reason == "" || (has && v.AsString() == reason) {
			total += dp.Value
		}
	}
	return total
}

const (
	metricProcessed  = "processor_object_ref_records_processed"
	metricNormalized = "processor_object_ref_references_normalized"
	metricRejected   = "processor_object_ref_references_rejected"
	metricConflicts  = "processor_object_ref_subject_conflicts"
	metricCorrelated = "processor_object_ref_records_correlated"
)

const podUID = "6b1b0f4e-9c2b-4c49-9d0e-1f9a3c7e0a11"

func eventRegardingPod() map[string]any {
	return map[string]any{
		"kind": "Pod", "apiVersion": "v1", "namespace": "default", "name": "web-0",
		"uid": podUID, "resourceVersion": "4711", "fieldPath": "spec.containers{app}",
	}
}

func eventRelatedNode() map[string]any {
	return map[string]any{"kind": "Node", "apiVersion": "v1", "name": "node-1", "uid": "n-1"}
}

func TestProcessStringForm(t *testing.T) {
	tests := []struct {
		name       string
		in         map[string]any
		want       map[string]any
		normalized int64
		rejected   map[string]int64
		conflicts  map[string]int64
	}{
		{
			name: "klog text InfoS with KObj (pod=\"ns/name\" as the klog parser writes it)",
			in:   map[string]any{"pod": "kube-system/kubedns", "status": "ready"},
			want: map[string]any{
				"pod": "kube-system/kubedns", "status": "ready",
				"k8s.pod.name": "kubedns", "k8s.namespace.name": "kube-system",
			},
			normalized: 1,
		},
		{
			name: "klog JSON InfoS with KObj (pod map as the klog parser writes it)",
			in:   map[string]any{"pod": map[string]any{"name": "kubedns", "namespace": "kube-system"}, "status": "ready"},
			want: map[string]any{
				"pod": "kube-system/kubedns", "status": "ready",
				"k8s.pod.name": "kubedns", "k8s.namespace.name": "kube-system",
			},
			normalized: 1,
		},
		{
			name: "bare name with sibling namespace key",
			in:   map[string]any{"pod": "kubedns", "namespace": "kube-system"},
			want: map[string]any{
				"pod": "kube-system/kubedns", "namespace": "kube-system",
				"k8s.pod.name": "kubedns", "k8s.namespace.name": "kube-system",
			},
			normalized: 2,
		},
		{
			name: "klog JSON KRef without namespace plus sibling namespace",
			in:   map[string]any{"pod": map[string]any{"name": "kubedns"}, "namespace": "kube-system"},
			want: map[string]any{
				"pod": "kube-system/kubedns", "namespace": "kube-system",
				"k8s.pod.name": "kubedns", "k8s.namespace.name": "kube-system",
			},
			normalized: 2,
		},
		{
			name:     "bare namespaced name without namespace is ambiguous",
			in:       map[string]any{"pod": "kubedns"},
			want:     map[string]any{"pod": "kubedns"},
			rejected: map[string]int64{"missing_namespace": 1},
		},
		{
			name:     "NamespacedName with empty namespace for a namespaced kind",
			in:       map[string]any{"pod": "/kubedns", "namespace": "kube-system"},
			want:     map[string]any{"pod": "/kubedns", "namespace": "kube-system", "k8s.namespace.name": "kube-system"},
			rejected: map[string]int64{"missing_namespace": 1}, normalized: 1,
		},
		{
			name:       "cluster-scoped bare name",
			in:         map[string]any{"node": "node-1"},
			want:       map[string]any{"node": "node-1", "k8s.node.name": "node-1"},
			normalized: 1,
		},
		{
			name:       "cluster-scoped NamespacedName form",
			in:         map[string]any{"node": "/node-1"},
			want:       map[string]any{"node": "node-1", "k8s.node.name": "node-1"},
			normalized: 1,
		},
		{
			name:       "cluster-scoped map with explicit empty namespace",
			in:         map[string]any{"node": map[string]any{"name": "node-1", "namespace": ""}},
			want:       map[string]any{"node": "node-1", "k8s.node.name": "node-1"},
			normalized: 1,
		},
		{
			name:     "cluster-scoped kind with a namespace",
			in:       map[string]any{"node": "default/node-1"},
			want:     map[string]any{"node": "default/node-1"},
			rejected: map[string]int64{"unexpected_namespace": 1},
		},
		{
			name:     "KObj(nil)",
			in:       map[string]any{"pod": ""},
			want:     map[string]any{"pod": ""},
			rejected: map[string]int64{"empty": 1},
		},
		{
			name:     "free text under a reference key",
			in:       map[string]any{"pod": "failed to get pod"},
			want:     map[string]any{"pod": "failed to get pod"},
			rejected: map[string]int64{"malformed": 1},
		},
		{
			name:     "non-string value",
			in:       map[string]any{"pod": int64(42), "node": []any{"a"}},
			want:     map[string]any{"pod": int64(42), "node": []any{"a"}},
			rejected: map[string]int64{"malformed": 2},
		},
		{
			name:     "map that is not a reference",
			in:       map[string]any{"pod": map[string]any{"name": "a", "namespace": "b", "phase": "Running"}},
			want:     map[string]any{"pod": map[string]any{"name": "a", "namespace": "b", "phase": "Running"}},
			rejected: map[string]int64{"malformed": 1},
		},
		{
			name:     "invalid sibling namespace",
			in:       map[string]any{"pod": "kubedns", "namespace": "Kube System"},
			want:     map[string]any{"pod": "kubedns", "namespace": "Kube System"},
			rejected: map[string]int64{"malformed": 2},
		},
		{
			name: "sibling uid key",
			in:   map[string]any{"pod": "default/web-0", "podUID": podUID},
			want: map[string]any{
				"pod": "default/web-0", "podUID": podUID,
				"k8s.pod.name": "web-0", "k8s.pod.uid": podUID, "k8s.namespace.name": "default",
			},
			normalized: 1,
		},
		{
			name: "invalid sibling uid is not used",
			in:   map[string]any{"pod": "default/web-0", "podUID": "not a uid"},
			want: map[string]any{
				"pod": "default/web-0", "podUID": "not a uid",
				"k8s.pod.name": "web-0", "k8s.namespace.name": "default",
			},
			normalized: 1,
		},
		{
			name: "klog text of a struct: JSON object text with details becomes a map",
			in:   map[string]any{"involvedObject": `{"kind":"Pod","namespace":"default","name":"web-0","uid":"` + podUID + `","apiVersion":"v1","resourceVersion":"4711","fieldPath":"spec.containers{app}"}`},
			want: map[string]any{
				"involvedObject": eventRegardingPod(),
				"k8s.pod.name":   "web-0", "k8s.pod.uid": podUID, "k8s.namespace.name": "default",
			},
			normalized: 1,
		},
		{
			name: "JSON object text without details becomes a string",
			in:   map[string]any{"pod": `{"name":"kubedns","namespace":"kube-system"}`},
			want: map[string]any{
				"pod":          "kube-system/kubedns",
				"k8s.pod.name": "kubedns", "k8s.namespace.name": "kube-system",
			},
			normalized: 1,
		},
		{
			name: "event regarding and related (events.k8s.io/v1)",
			in:   map[string]any{"regarding": eventRegardingPod(), "related": eventRelatedNode(), "reason": "Pulled"},
			want: map[string]any{
				"regarding": eventRegardingPod(), "related": eventRelatedNode(), "reason": "Pulled",
				"k8s.pod.name": "web-0", "k8s.pod.uid": podUID, "k8s.namespace.name": "default",
			},
			normalized: 2,
		},
		{
			name: "event about a node: related pod is not the subject",
			in:   map[string]any{"regarding": eventRelatedNode(), "related": eventRegardingPod()},
			want: map[string]any{
				"regarding": eventRelatedNode(), "related": eventRegardingPod(),
				"k8s.node.name": "node-1", "k8s.node.uid": "n-1",
			},
			normalized: 2,
		},
		{
			name: "core/v1 event involvedObject without details",
			in:   map[string]any{"involvedObject": map[string]any{"namespace": "default", "name": "web-0"}},
			want: map[string]any{"involvedObject": "default/web-0"},
			// no kind: normalized, but not a subject
			normalized: 1,
		},
		{
			name:     "regarding string without kind and without namespace",
			in:       map[string]any{"regarding": "web-0"},
			want:     map[string]any{"regarding": "web-0"},
			rejected: map[string]int64{"unknown_kind": 1},
		},
		{
			name: "object/kind pair (garbage collector)",
			in:   map[string]any{"object": "kube-system/coredns-5d78c9869d", "objectUID": "rs-1", "kind": "ReplicaSet"},
			want: map[string]any{
				"object": "kube-system/coredns-5d78c9869d", "objectUID": "rs-1", "kind": "ReplicaSet",
				"k8s.replicaset.name": "coredns-5d78c9869d", "k8s.replicaset.uid": "rs-1", "k8s.namespace.name": "kube-system",
			},
			normalized: 1,
		},
		{
			name:       "object/kind pair, cluster-scoped",
			in:         map[string]any{"object": "node-1", "kind": "Node"},
			want:       map[string]any{"object": "node-1", "kind": "Node", "k8s.node.name": "node-1"},
			normalized: 1,
		},
		{
			name:       "object with a kind not in the table: normalized, no subject",
			in:         map[string]any{"object": map[string]any{"name": "cert", "namespace": "default"}, "kind": "Certificate"},
			want:       map[string]any{"object": "default/cert", "kind": "Certificate"},
			normalized: 1,
		},
		{
			name:     "object bare name with unknown kind",
			in:       map[string]any{"object": "cert", "kind": "Certificate", "namespace": "default"},
			want:     map[string]any{"object": "cert", "kind": "Certificate", "namespace": "default", "k8s.namespace.name": "default"},
			rejected: map[string]int64{"unknown_kind": 1}, normalized: 1,
		},
		{
			name:     "object map kind disagrees with kind key",
			in:       map[string]any{"object": map[string]any{"kind": "Pod", "namespace": "a", "name": "b"}, "kind": "Node"},
			want:     map[string]any{"object": map[string]any{"kind": "Pod", "namespace": "a", "name": "b"}, "kind": "Node"},
			rejected: map[string]int64{"kind_mismatch": 1},
		},
		{
			name:     "map kind disagrees with the key's kind",
			in:       map[string]any{"pod": map[string]any{"kind": "Node", "name": "node-1"}},
			want:     map[string]any{"pod": map[string]any{"kind": "Node", "name": "node-1"}},
			rejected: map[string]int64{"kind_mismatch": 1},
		},
		{
			name: "two pods: first configured key is the subject",
			in:   map[string]any{"regarding": eventRegardingPod(), "pod": "default/other"},
			want: map[string]any{
				"regarding": eventRegardingPod(), "pod": "default/other",
				"k8s.pod.name": "other", "k8s.namespace.name": "default",
			},
			normalized: 2,
		},
		{
			name: "several kinds in one record (scheduler: pod and node)",
			in:   map[string]any{"pod": "default/web-0", "node": "node-1", "evaluatedNodes": int64(3)},
			want: map[string]any{
				"pod": "default/web-0", "node": "node-1", "evaluatedNodes": int64(3),
				"k8s.pod.name": "web-0", "k8s.node.name": "node-1", "k8s.namespace.name": "default",
			},
			normalized: 2,
		},
		{
			name: "subjects in different namespaces: no namespace attribute",
			in:   map[string]any{"pod": "a/x", "deployment": "b/y"},
			want: map[string]any{
				"pod": "a/x", "deployment": "b/y",
				"k8s.pod.name": "x", "k8s.deployment.name": "y",
			},
			normalized: 2, conflicts: map[string]int64{"namespace": 1},
		},
		{
			name:       "existing attribute with another value is kept",
			in:         map[string]any{"pod": "a/x", "k8s.pod.name": "other"},
			want:       map[string]any{"pod": "a/x", "k8s.pod.name": "other", "k8s.namespace.name": "a"},
			normalized: 1, conflicts: map[string]int64{"attribute": 1},
		},
		{
			name: "already normalized record is unchanged",
			in: map[string]any{
				"pod": "a/x", "podUID": "u", "k8s.pod.name": "x", "k8s.pod.uid": "u",
				"k8s.namespace.name": "a",
			},
			want: map[string]any{
				"pod": "a/x", "podUID": "u", "k8s.pod.name": "x", "k8s.pod.uid": "u",
				"k8s.namespace.name": "a",
			},
			normalized: 1,
		},
		{
			name:       "namespace subject disagreeing with the pod's namespace",
			in:         map[string]any{"pod": "a/x", "namespace": map[string]any{"name": "b", "uid": "ns-uid"}},
			want:       map[string]any{"pod": "a/x", "namespace": map[string]any{"name": "b", "uid": "ns-uid"}, "k8s.pod.name": "x"},
			normalized: 2, conflicts: map[string]int64{"namespace": 1},
		},
		{
			name:       "namespace subject",
			in:         map[string]any{"namespace": "team-a"},
			want:       map[string]any{"namespace": "team-a", "k8s.namespace.name": "team-a"},
			normalized: 1,
		},
		{
			name: "no reference keys",
			in:   map[string]any{"Pod": "a/b", "msg": "x"},
			want: map[string]any{"Pod": "a/b", "msg": "x"},
		},
		{
			name:     "one bad reference does not stop the others",
			in:       map[string]any{"pod": "a/b/c", "node": "node-1"},
			want:     map[string]any{"pod": "a/b/c", "node": "node-1", "k8s.node.name": "node-1"},
			rejected: map[string]int64{"malformed": 1}, normalized: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, &Config{Form: FormString}, nil)
			lr := h.run(tt.in, nil)
			assert.Equal(t, tt.want, lr.Attributes().AsRaw())
			assert.Equal(t, int64(1), h.counter(metricProcessed, ""))
			assert.Equal(t, tt.normalized, h.counter(metricNormalized, ""))
			var rejected int64
			for reason, n := range tt.rejected {
				assert.Equal(t, n, h.counter(metricRejected, reason), reason)
				rejected += n
			}
			assert.Equal(t, rejected, h.counter(metricRejected, ""), "rejections by other reasons")
			var conflicts int64
			for reason, n := range tt.conflicts {
				assert.Equal(t, n, h.counter(metricConflicts, reason), reason)
				conflicts += n
			}
			assert.Equal(t, conflicts, h.counter(metricConflicts, ""))
		})
	}
}

// TestEveryDefaultKey checks each built-in fixed-kind key in every spelling: string, map, bare
// name with sibling namespace (namespaced kinds) and bare name (cluster-scoped kinds).
func TestEveryDefaultKey(t *testing.T) {
	h := newHarness(t, &Config{}, nil)
	tb, err := buildTable(&Config{})
	require.NoError(t, err)
	for _, key := range builtinKeys {
		if key.Kind == "" {
			continue
		}
		kind := tb.kinds[key.Kind]
		t.Run(key.Key, func(t *testing.T) {
			var spellings []map[string]any
			canonical := "obj-1"
			wantSubject := map[string]any{}
			if kind.scope == k8sref.Namespaced {
				canonical = "ns-1/obj-1"
				spellings = []map[string]any{
					{key.Key: "ns-1/obj-1"},
					{key.Key: map[string]any{"name": "obj-1", "namespace": "ns-1"}},
					{key.Key: "obj-1", "namespace": "ns-1"},
					{key.Key: map[string]any{"name": "obj-1"}, "namespace": "ns-1"},
					{key.Key: `{"name":"obj-1","namespace":"ns-1"}`},
				}
				wantSubject[namespaceNameAttribute] = "ns-1"
			} else {
				spellings = []map[string]any{
					{key.Key: "obj-1"},
					{key.Key: "/obj-1"},
					{key.Key: map[string]any{"name": "obj-1"}},
					{key.Key: `{"name":"obj-1"}`},
				}
			}
			if kind.isNamespace {
				wantSubject[namespaceNameAttribute] = "obj-1"
			} else {
				wantSubject[kind.nameAttribute] = "obj-1"
			}
			for _, in := range spellings {
				lr := h.run(in, nil)
				got := lr.Attributes().AsRaw()
				assert.Equal(t, canonical, got[key.Key], "%v", in)
				for k, v := range wantSubject {
					assert.Equal(t, v, got[k], "%s for %v", k, in)
				}
			}
		})
	}
	assert.Zero(t, h.counter(metricRejected, ""))
}

func TestTextAndJSONConverge(t *testing.T) {
	// The same klog.InfoS("Pod status updated", "pod", klog.KObj(pod), "podUID", pod.UID,
	// "node", klog.KObj(node)) call, as the klog parser writes its text and JSON lines.
	text := map[string]any{"pod": "kube-system/kubedns", "podUID": podUID, "node": "node-1", "status": "ready"}
	jsonForm := map[string]any{
		"pod":    map[string]any{"name": "kubedns", "namespace": "kube-system"},
		"podUID": podUID,
		"node":   map[string]any{"name": "node-1"},
		"status": "ready",
	}
	for _, form := range []Form{FormString, FormMap} {
		t.Run(string(form), func(t *testing.T) {
			h := newHarness(t, &Config{Form: form}, nil)
			a := h.run(text, nil).Attributes().AsRaw()
			b := h.run(jsonForm, nil).Attributes().AsRaw()
			assert.Equal(t, a, b)
			assert.Equal(t, "kubedns", a["k8s.pod.name"])
			assert.Equal(t, podUID, a["k8s.pod.uid"])
			assert.Equal(t, "node-1", a["k8s.node.name"])
			assert.Equal(t, "kube-system", a["k8s.namespace.name"])
		})
	}
}

func TestProcessMapForm(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		{
			name: "string becomes map",
			in:   map[string]any{"pod": "kube-system/kubedns"},
			want: map[string]any{
				"pod":          map[string]any{"namespace": "kube-system", "name": "kubedns"},
				"k8s.pod.name": "kubedns", "k8s.namespace.name": "kube-system",
			},
		},
		{
			name: "bare name with sibling namespace",
			in:   map[string]any{"pod": map[string]any{"name": "kubedns"}, "namespace": "kube-system"},
			want: map[string]any{
				"pod":          map[string]any{"namespace": "kube-system", "name": "kubedns"},
				"namespace":    map[string]any{"name": "kube-system"},
				"k8s.pod.name": "kubedns", "k8s.namespace.name": "kube-system",
			},
		},
		{
			name: "cluster-scoped",
			in:   map[string]any{"node": "/node-1"},
			want: map[string]any{"node": map[string]any{"name": "node-1"}, "k8s.node.name": "node-1"},
		},
		{
			name: "explicit empty namespace is dropped",
			in:   map[string]any{"regarding": map[string]any{"kind": "Node", "name": "node-1", "namespace": ""}},
			want: map[string]any{"regarding": map[string]any{"kind": "Node", "name": "node-1"}, "k8s.node.name": "node-1"},
		},
		{
			name: "map already canonical is unchanged",
			in:   map[string]any{"regarding": eventRegardingPod()},
			want: map[string]any{
				"regarding":    eventRegardingPod(),
				"k8s.pod.name": "web-0", "k8s.pod.uid": podUID, "k8s.namespace.name": "default",
			},
		},
		{
			name: "rejected reference is left as it was",
			in:   map[string]any{"pod": "kubedns"},
			want: map[string]any{"pod": "kubedns"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, &Config{Form: FormMap}, nil)
			assert.Equal(t, tt.want, h.run(tt.in, nil).Attributes().AsRaw())
		})
	}
}

func TestProcessBody(t *testing.T) {
	// An events.k8s.io/v1 Event as a map body (the k8sobjects receiver's pull mode).
	event := map[string]any{
		"kind": "Event", "apiVersion": "events.k8s.io/v1", "reason": "Pulled",
		"regarding": eventRegardingPod(), "related": eventRelatedNode(),
	}
	t.Run("enabled", func(t *testing.T) {
		h := newHarness(t, &Config{Body: true}, nil)
		lr := h.run(map[string]any{}, event)
		assert.Equal(t, map[string]any{"k8s.pod.name": "web-0", "k8s.pod.uid": podUID, "k8s.namespace.name": "default"},
			lr.Attributes().AsRaw())
		assert.Equal(t, event, lr.Body().Map().AsRaw())
		assert.Equal(t, int64(2), h.counter(metricNormalized, ""))
	})
	t.Run("body string form rewrite", func(t *testing.T) {
		h := newHarness(t, &Config{Body: true}, nil)
		lr := h.run(map[string]any{}, map[string]any{"pod": map[string]any{"name": "a", "namespace": "b"}})
		assert.Equal(t, map[string]any{"pod": "b/a"}, lr.Body().Map().AsRaw())
		assert.Equal(t, "a", lr.Attributes().AsRaw()["k8s.pod.name"])
	})
	t.Run("attributes before body", func(t *testing.T) {
		h := newHarness(t, &Config{Body: true}, nil)
		lr := h.run(map[string]any{"pod": "default/from-attrs"}, map[string]any{"pod": "default/from-body"})
		assert.Equal(t, "from-attrs", lr.Attributes().AsRaw()["k8s.pod.name"])
	})
	t.Run("siblings are read beside the reference only", func(t *testing.T) {
		h := newHarness(t, &Config{Body: true}, nil)
		lr := h.run(map[string]any{"namespace": "from-attrs", "podUID": "u-attrs"},
			map[string]any{"pod": "web-0", "podUID": int64(7)})
		assert.Equal(t, map[string]any{"pod": "web-0", "podUID": int64(7)}, lr.Body().Map().AsRaw(),
			"a bare pod in the body takes no namespace from the attributes")
		assert.Equal(t, int64(1), h.counter(metricRejected, "missing_namespace"))
		lr = h.run(map[string]any{"podUID": "u-attrs"}, map[string]any{"pod": "web-0", "namespace": "b", "podUID": int64(7)})
		assert.Equal(t, map[string]any{"podUID": "u-attrs", "k8s.pod.name": "web-0", "k8s.namespace.name": "b"},
			lr.Attributes().AsRaw(), "nor a uid; a sibling that is not a string is not read")
	})
	t.Run("body field (watch mode envelope)", func(t *testing.T) {
		h := newHarness(t, &Config{Body: true, BodyField: "object"}, nil)
		watch := map[string]any{"type": "ADDED", "object": event}
		lr := h.run(map[string]any{}, watch)
		assert.Equal(t, map[string]any{"k8s.pod.name": "web-0", "k8s.pod.uid": podUID, "k8s.namespace.name": "default"},
			lr.Attributes().AsRaw())
		assert.Equal(t, watch, lr.Body().Map().AsRaw())
		assert.Zero(t, h.counter(metricRejected, ""), "the envelope's object key is not read as a reference")
		lr = h.run(map[string]any{}, map[string]any{"type": "ADDED", "object": "not a map"})
		assert.Empty(t, lr.Attributes().AsRaw())
	})
	t.Run("disabled", func(t *testing.T) {
		h := newHarness(t, &Config{}, nil)
		lr := h.run(map[string]any{}, event)
		assert.Empty(t, lr.Attributes().AsRaw())
		assert.Zero(t, h.counter(metricNormalized, ""))
	})
}

func TestCustomTables(t *testing.T) {
	cfg := &Config{
		Keys: []KeyConfig{
			{Key: "certificate", Kind: "Certificate"},
			{Key: "claim", Kind: "PersistentVolumeClaim", NamespaceKey: strPtr("claimNamespace"), UIDKey: strPtr("")},
			{Key: "target", KindKey: "targetKind", Subject: boolPtr(false)},
		},
		ExcludeKeys: []string{"lease"},
		Kinds: []KindConfig{
			{Kind: "Certificate", APIVersion: "cert-manager.io/v1", Namespaced: true, NameAttribute: "cert_manager.certificate.name"},
			{Kind: "Pod", APIVersion: "v1", Namespaced: true, NameAttribute: "my.pod"},
		},
	}
	h := newHarness(t, cfg, nil)
	tests := []struct {
		in, want map[string]any
	}{
		{
			in:   map[string]any{"certificate": "default/web-tls"},
			want: map[string]any{"certificate": "default/web-tls", "cert_manager.certificate.name": "web-tls", "k8s.namespace.name": "default"},
		},
		{
			in: map[string]any{"claim": "data-0", "claimNamespace": "db", "claimUID": "x"},
			want: map[string]any{
				"claim": "db/data-0", "claimNamespace": "db", "claimUID": "x",
				"k8s.persistentvolumeclaim.name": "data-0", "k8s.namespace.name": "db",
			},
		},
		{
			in:   map[string]any{"target": "db/web", "targetKind": "Pod"},
			want: map[string]any{"target": "db/web", "targetKind": "Pod"},
		},
		{
			in:   map[string]any{"pod": "db/web"},
			want: map[string]any{"pod": "db/web", "my.pod": "web", "k8s.namespace.name": "db"},
		},
		{
			in:   map[string]any{"lease": "x"},
			want: map[string]any{"lease": "x"},
		},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, h.run(tt.in, nil).Attributes().AsRaw())
	}
}

func TestBatchCounts(t *testing.T) {
	h := newHarness(t, &Config{}, nil)
	ld := plog.NewLogs()
	for range 2 {
		lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
		lrs.AppendEmpty().Attributes().PutStr("pod", "a/b")
		lrs.AppendEmpty().Attributes().PutStr("pod", "b")
		lrs.AppendEmpty().Body().SetStr("no attributes")
	}
	require.NoError(t, h.proc.ConsumeLogs(context.Background(), ld))
	assert.Equal(t, int64(6), h.counter(metricProcessed, ""))
	assert.Equal(t, int64(2), h.counter(metricNormalized, ""))
	assert.Equal(t, int64(2), h.counter(metricRejected, "missing_namespace"))
	assert.Equal(t, 6, h.sink.LogRecordCount(), "every record is passed on")
}

func TestKeyPrefix(t *testing.T) {
	h := newHarness(t, &Config{KeyPrefix: "klog.", Body: true}, nil)
	lr := h.run(map[string]any{
		"klog.pod": "web-0", "klog.namespace": "default", "klog.podUID": "u-1",
		"node": "not-read-without-prefix",
	}, map[string]any{"node": "node-1"})
	assert.Equal(t, map[string]any{
		"klog.pod": "default/web-0", "klog.namespace": "default", "klog.podUID": "u-1",
		"node":         "not-read-without-prefix",
		"k8s.pod.name": "web-0", "k8s.pod.uid": "u-1", "k8s.namespace.name": "default",
		"k8s.node.name": "node-1",
	}, lr.Attributes().AsRaw(), "attributes need the prefix, the body does not")
}
