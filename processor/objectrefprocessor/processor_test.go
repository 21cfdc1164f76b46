// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
	"github.com/otelcol-k8s/otelcol-k8s/processor/objectrefprocessor/internal/metadata"
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

// run processes one record that klog_parser recognized (it carries otelcol_k8s.klog.format),
// built from attrs (and body, when not nil), and returns it without the format attribute.
func (h *harness) run(attrs map[string]any, body map[string]any) plog.LogRecord {
	h.t.Helper()
	lr := h.runRaw(nil, withKlogFormat(attrs), body)
	lr.Attributes().Remove(attr.KlogFormat)
	return lr
}

func withKlogFormat(attrs map[string]any) map[string]any {
	out := map[string]any{attr.KlogFormat: "text"}
	for k, v := range attrs {
		out[k] = v
	}
	return out
}

// runRaw processes one record with the given resource and record attributes, as they are.
func (h *harness) runRaw(resource, attrs map[string]any, body map[string]any) plog.LogRecord {
	h.t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	require.NoError(h.t, rl.Resource().Attributes().FromRaw(resource))
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
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
	metricIgnored    = "processor_object_ref_records_ignored"
	metricProcessed  = "processor_object_ref_records_processed"
	metricNormalized = "processor_object_ref_references_normalized"
	metricRejected   = "processor_object_ref_references_rejected"
	metricConflicts  = "processor_object_ref_subject_conflicts"
	metricCorrelated = "processor_object_ref_records_correlated"
)

const (
	podUID  = "6b1b0f4e-9c2b-4c49-9d0e-1f9a3c7e0a11"
	nodeUID = "0f3c1a52-77de-4b8e-9a51-2c6d8e9b4f10"
)

func eventRegardingPod() map[string]any {
	return map[string]any{
		"kind": "Pod", "apiVersion": "v1", "namespace": "default", "name": "web-0",
		"uid": podUID, "resourceVersion": "4711", "fieldPath": "spec.containers{app}",
	}
}

func eventRelatedNode() map[string]any {
	return map[string]any{"kind": "Node", "apiVersion": "v1", "name": "node-1", "uid": nodeUID}
}

// The names object_ref writes, spelled out here (not taken from the registry) so that a wrong
// edit to either side breaks a test.
const (
	oKind   = "otelcol_k8s.object.kind"
	oAPI    = "otelcol_k8s.object.api_version"
	oNS     = "otelcol_k8s.object.namespace"
	oName   = "otelcol_k8s.object.name"
	oUID    = "otelcol_k8s.object.uid"
	oField  = "otelcol_k8s.object.field_path"
	oRV     = "otelcol_k8s.object.resource_version"
	oRefs   = "otelcol_k8s.object.refs"
	rKind   = "otelcol_k8s.related.kind"
	rAPI    = "otelcol_k8s.related.api_version"
	rName   = "otelcol_k8s.related.name"
	rUID    = "otelcol_k8s.related.uid"
	rNS     = "otelcol_k8s.related.namespace"
	rField  = "otelcol_k8s.related.field_path"
	klogFmt = "otelcol_k8s.klog.format"
)

func TestProcessStringForm(t *testing.T) {
	tests := []struct {
		name       string
		in         map[string]any
		want       map[string]any
		normalized int64
		rejected   map[string]int64
	}{
		{
			name: "klog text InfoS with KObj",
			in:   map[string]any{"pod": "kube-system/kubedns", "status": "ready"},
			want: map[string]any{
				"pod": "kube-system/kubedns", "status": "ready",
				oKind: "Pod", oAPI: "v1", oNS: "kube-system", oName: "kubedns",
			},
			normalized: 1,
		},
		{
			name: "klog JSON InfoS with KObj",
			in:   map[string]any{"pod": map[string]any{"name": "kubedns", "namespace": "kube-system"}},
			want: map[string]any{
				"pod": "kube-system/kubedns",
				oKind: "Pod", oAPI: "v1", oNS: "kube-system", oName: "kubedns",
			},
			normalized: 1,
		},
		{
			name: "bare name with sibling namespace key",
			in:   map[string]any{"pod": "kubedns", "namespace": "kube-system"},
			want: map[string]any{
				"pod": "kube-system/kubedns", "namespace": "kube-system",
				oKind: "Pod", oAPI: "v1", oNS: "kube-system", oName: "kubedns",
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
			name: "scheduler bind: the pod is the subject, the node another object",
			in:   map[string]any{"pod": "default/nginx-7c5ddbdf54-x2kqj", "node": "ip-10-0-1-23.ec2.internal", "evaluatedNodes": int64(6)},
			want: map[string]any{
				"pod": "default/nginx-7c5ddbdf54-x2kqj", "node": "ip-10-0-1-23.ec2.internal", "evaluatedNodes": int64(6),
				oKind: "Pod", oAPI: "v1", oNS: "default", oName: "nginx-7c5ddbdf54-x2kqj",
				oRefs: []any{"Node/ip-10-0-1-23.ec2.internal"},
			},
			normalized: 2,
		},
		{
			name:       "cluster-scoped NamespacedName form",
			in:         map[string]any{"node": "/node-1"},
			want:       map[string]any{"node": "node-1", oKind: "Node", oAPI: "v1", oName: "node-1"},
			normalized: 1,
		},
		{
			name:     "cluster-scoped kind with a namespace",
			in:       map[string]any{"node": "default/node-1"},
			want:     map[string]any{"node": "default/node-1"},
			rejected: map[string]int64{"unexpected_namespace": 1},
		},
		{
			// Regression: kube-proxy's ns/name:port wrote k8s.service.name="kubernetes:https".
			name:       "kube-proxy service port",
			in:         map[string]any{"portName": "default/kubernetes:https", "servicePort": "10.96.0.1:443/TCP"},
			want:       map[string]any{"portName": "default/kubernetes:https", "servicePort": "10.96.0.1:443/TCP", oKind: "Service", oAPI: "v1", oNS: "default", oName: "kubernetes"},
			normalized: 1,
		},
		{
			// Regression: a Knative Service became a core Service.
			name: "knative service keeps its API group",
			in:   map[string]any{"object": map[string]any{"kind": "Service", "apiVersion": "serving.knative.dev/v1", "namespace": "default", "name": "hello"}},
			want: map[string]any{
				"object": "default/hello",
				oKind:    "Service", oAPI: "serving.knative.dev/v1", oNS: "default", oName: "hello",
			},
			normalized: 1,
		},
		{
			// Regression: kubelet's node references carry the node name as uid.
			name: "kubelet node reference",
			in:   map[string]any{"involvedObject": map[string]any{"kind": "Node", "name": "node-1", "uid": "node-1"}},
			want: map[string]any{
				"involvedObject": "node-1",
				oKind:            "Node", oAPI: "v1", oName: "node-1",
			},
			normalized: 1,
		},
		{
			// Regression: a value that is not a namespace name was written as the namespace.
			name:     "invalid namespace reference",
			in:       map[string]any{"namespace": "Kube System"},
			want:     map[string]any{"namespace": "Kube System"},
			rejected: map[string]int64{"malformed": 1},
		},
		{
			name:     "invalid sibling namespace",
			in:       map[string]any{"pod": "kubedns", "namespace": "kube_system"},
			want:     map[string]any{"pod": "kubedns", "namespace": "kube_system"},
			rejected: map[string]int64{"malformed": 2},
		},
		{
			name:     "pod name that the API would refuse",
			in:       map[string]any{"pod": "default/Web_0"},
			want:     map[string]any{"pod": "default/Web_0"},
			rejected: map[string]int64{"malformed": 1},
		},
		{
			name:       "namespace alone is the subject",
			in:         map[string]any{"namespace": "shop"},
			want:       map[string]any{"namespace": "shop", oKind: "Namespace", oAPI: "v1", oName: "shop"},
			normalized: 1,
		},
		{
			name: "sibling uid key",
			in:   map[string]any{"pod": "default/web-0", "podUID": podUID},
			want: map[string]any{
				"pod": "default/web-0", "podUID": podUID,
				oKind: "Pod", oAPI: "v1", oNS: "default", oName: "web-0", oUID: podUID,
			},
			normalized: 1,
		},
		{
			name:     "KObj(nil) and free text",
			in:       map[string]any{"pod": "", "node": "failed to get node"},
			want:     map[string]any{"pod": "", "node": "failed to get node"},
			rejected: map[string]int64{"empty": 1, "malformed": 1},
		},
		{
			name: "KObjSlice in klog text",
			in:   map[string]any{"pods": `["kube-system/coredns-1","default/web-0",null]`},
			want: map[string]any{
				"pods": []any{"kube-system/coredns-1", "default/web-0"},
				oRefs:  []any{"Pod/kube-system/coredns-1", "Pod/default/web-0"},
			},
			normalized: 2,
		},
		{
			name: "KObjSlice in klog JSON",
			in:   map[string]any{"pods": []any{map[string]any{"name": "coredns-1", "namespace": "kube-system"}, nil}},
			want: map[string]any{
				"pods": []any{"kube-system/coredns-1"},
				oRefs:  []any{"Pod/kube-system/coredns-1"},
			},
			normalized: 1,
		},
		{
			name:     "KObjSlice with a bad element is left as it was",
			in:       map[string]any{"pods": `["kube-system/coredns-1","Bad Name"]`},
			want:     map[string]any{"pods": `["kube-system/coredns-1","Bad Name"]`, oRefs: []any{"Pod/kube-system/coredns-1"}},
			rejected: map[string]int64{"malformed": 1}, normalized: 0,
		},
		{
			name: "event regarding and related (events.k8s.io/v1)",
			in:   map[string]any{"regarding": eventRegardingPod(), "related": eventRelatedNode(), "reason": "Pulled"},
			want: map[string]any{
				"regarding": "default/web-0", "related": "node-1", "reason": "Pulled",
				oKind: "Pod", oAPI: "v1", oNS: "default", oName: "web-0", oUID: podUID, oField: "spec.containers{app}", oRV: "4711",
				rKind: "Node", rAPI: "v1", rName: "node-1", rUID: nodeUID,
			},
			normalized: 2,
		},
		{
			name: "object/kind pair (garbage collector)",
			in:   map[string]any{"object": "kube-system/coredns-5d78c9869d", "objectUID": podUID, "kind": "ReplicaSet"},
			want: map[string]any{
				"object": "kube-system/coredns-5d78c9869d", "objectUID": podUID, "kind": "ReplicaSet",
				oKind: "ReplicaSet", oAPI: "apps/v1", oNS: "kube-system", oName: "coredns-5d78c9869d", oUID: podUID,
			},
			normalized: 1,
		},
		{
			name:     "object bare name with unknown kind",
			in:       map[string]any{"object": "cert", "kind": "Certificate"},
			want:     map[string]any{"object": "cert", "kind": "Certificate"},
			rejected: map[string]int64{"unknown_kind": 1},
		},
		{
			name:     "map kind disagrees with the key's kind",
			in:       map[string]any{"pod": map[string]any{"kind": "Node", "name": "node-1"}},
			want:     map[string]any{"pod": map[string]any{"kind": "Node", "name": "node-1"}},
			rejected: map[string]int64{"kind_mismatch": 1},
		},
		{
			name:       "core/v1 involvedObject without kind: normalized, not an object",
			in:         map[string]any{"involvedObject": map[string]any{"namespace": "default", "name": "web-0"}},
			want:       map[string]any{"involvedObject": "default/web-0"},
			normalized: 1,
		},
		{
			name: "two pods: the first key in the table is the subject",
			in:   map[string]any{"regarding": eventRegardingPod(), "pod": "default/other"},
			want: map[string]any{
				"regarding": "default/web-0", "pod": "default/other",
				oKind: "Pod", oAPI: "v1", oNS: "default", oName: "other",
				oRefs: []any{"Pod/default/web-0"},
			},
			normalized: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, createDefaultConfig().(*Config), nil)
			got := h.run(tt.in, nil)
			assert.Equal(t, tt.want, got.Attributes().AsRaw())
			assert.Equal(t, tt.normalized, h.counter(metricNormalized, ""), "normalized")
			for reason, n := range tt.rejected {
				assert.Equal(t, n, h.counter(metricRejected, reason), "rejected %s", reason)
			}
			var total int64
			for _, n := range tt.rejected {
				total += n
			}
			assert.Equal(t, total, h.counter(metricRejected, ""), "rejected in all")

			// Idempotent: a second pass changes nothing.
			again := h.run(got.Attributes().AsRaw(), nil)
			assert.Equal(t, tt.want, again.Attributes().AsRaw(), "second pass")
		})
	}
}

// TestDeclaredInput: records klog_parser did not recognize, such as application JSON, pass
// through untouched unless configured.
func TestDeclaredInput(t *testing.T) {
	app := map[string]any{
		"service": "search", "node": "worker-7", "pod": "prod/search-0", "namespace": "prod",
		"user": map[string]any{"name": "alice", "namespace": "team-a"},
	}
	h := newHarness(t, createDefaultConfig().(*Config), nil)
	got := h.runRaw(map[string]any{"k8s.namespace.name": "prod", "k8s.pod.name": "search-0"}, app, nil)
	assert.Equal(t, app, got.Attributes().AsRaw(), "application attributes are untouched")
	assert.Equal(t, int64(1), h.counter(metricIgnored, ""))
	assert.Equal(t, int64(0), h.counter(metricNormalized, ""))

	cfg := createDefaultConfig().(*Config)
	cfg.Match.Namespaces = []string{"kube-system"}
	h = newHarness(t, cfg, nil)
	got = h.runRaw(map[string]any{"k8s.namespace.name": "kube-system"}, map[string]any{"node": "node-1"}, nil)
	assert.Equal(t, map[string]any{"node": "node-1", oKind: "Node", oAPI: "v1", oName: "node-1"}, got.Attributes().AsRaw(), "configured namespace")
	got = h.runRaw(map[string]any{"k8s.namespace.name": "prod"}, map[string]any{"node": "node-1"}, nil)
	assert.Equal(t, map[string]any{"node": "node-1"}, got.Attributes().AsRaw(), "other namespace")

	cfg = createDefaultConfig().(*Config)
	cfg.Match = MatchConfig{Containers: []string{"kube-proxy"}}
	h = newHarness(t, cfg, nil)
	got = h.runRaw(map[string]any{"k8s.container.name": "kube-proxy"}, map[string]any{"portName": "default/kubernetes:https"}, nil)
	assert.Equal(t, "kubernetes", got.Attributes().AsRaw()[oName], "configured container")
	got = h.runRaw(nil, map[string]any{klogFmt: "text", "node": "node-1"}, nil)
	assert.Equal(t, map[string]any{klogFmt: "text", "node": "node-1"}, got.Attributes().AsRaw(), "klog off")
}

// TestNeverWritesResourceIdentity: no k8s.* name is written to a record, whatever it names.
func TestNeverWritesResourceIdentity(t *testing.T) {
	h := newHarness(t, createDefaultConfig().(*Config), nil)
	got := h.run(map[string]any{
		"pod": "default/web-0", "node": "node-1", "namespace": "default", "deployment": "default/web",
		"service": "default/web", "replicaSet": "default/web-5d", "job": "default/j", "regarding": eventRegardingPod(),
	}, nil)
	for k := range got.Attributes().AsRaw() {
		assert.NotContains(t, k, "k8s.pod", k)
		assert.False(t, len(k) > 4 && k[:4] == "k8s.", "record attribute %s is a resource identity name", k)
	}
}

func TestExistingSubjectIsKept(t *testing.T) {
	h := newHarness(t, createDefaultConfig().(*Config), nil)
	in := map[string]any{"pod": "default/web-0", oKind: "Pod", oNS: "default", oName: "other"}
	got := h.run(in, nil)
	assert.Equal(t, map[string]any{"pod": "default/web-0", oKind: "Pod", oNS: "default", oName: "other"}, got.Attributes().AsRaw())
	assert.Equal(t, int64(1), h.counter(metricConflicts, "attribute"))
}

func TestProcessMapForm(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Form = FormMap
	h := newHarness(t, cfg, nil)
	got := h.run(map[string]any{
		"pod": "kubedns", "namespace": "kube-system", "node": "/node-1",
		"portName": "default/kubernetes:https", "pods": `["a/b"]`,
	}, nil)
	assert.Equal(t, map[string]any{
		"pod":       map[string]any{"namespace": "kube-system", "name": "kubedns"},
		"namespace": map[string]any{"name": "kube-system"},
		"node":      map[string]any{"name": "node-1"},
		"portName":  map[string]any{"namespace": "default", "name": "kubernetes:https"},
		"pods":      []any{map[string]any{"namespace": "a", "name": "b"}},
		oKind:       "Pod", oAPI: "v1", oNS: "kube-system", oName: "kubedns",
		oRefs: []any{"Node/node-1", "Service/default/kubernetes", "Pod/a/b"},
	}, got.Attributes().AsRaw())
	again := h.run(got.Attributes().AsRaw(), nil)
	assert.Equal(t, got.Attributes().AsRaw(), again.Attributes().AsRaw(), "map form is a fixed point")
}

func TestProcessBodyAndPrefix(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Body, cfg.BodyField = true, "object"
	cfg.KeyPrefix = "kv."
	h := newHarness(t, cfg, nil)
	got := h.run(map[string]any{"kv.pod": "web-0", "kv.namespace": "default", "pod": "other/ignored"},
		map[string]any{"type": "ADDED", "object": map[string]any{"regarding": eventRegardingPod(), "related": eventRelatedNode()}})
	assert.Equal(t, map[string]any{
		"kv.pod": "default/web-0", "kv.namespace": "default", "pod": "other/ignored",
		oKind: "Pod", oAPI: "v1", oNS: "default", oName: "web-0", oUID: podUID, oField: "spec.containers{app}", oRV: "4711",
		rKind: "Node", rAPI: "v1", rName: "node-1", rUID: nodeUID,
	}, got.Attributes().AsRaw(), "prefixed keys in the attributes; the body's regarding is the same pod, with details")
	assert.Equal(t, "default/web-0", got.Body().Map().AsRaw()["object"].(map[string]any)["regarding"])
}

func TestCustomKinds(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Kinds = []KindConfig{{Kind: "Certificate", APIVersion: "cert-manager.io/v1", Namespaced: true}}
	cfg.Keys = []KeyConfig{{Key: "certificate", Kind: "Certificate"}, {Key: "target", KindKey: "targetKind", Subject: boolPtr(false)}}
	h := newHarness(t, cfg, nil)
	got := h.run(map[string]any{"certificate": "web-tls", "namespace": "shop", "target": "shop/web", "targetKind": "Deployment"}, nil)
	assert.Equal(t, map[string]any{
		"certificate": "shop/web-tls", "namespace": "shop", "target": "shop/web", "targetKind": "Deployment",
		oKind: "Certificate", oAPI: "cert-manager.io/v1", oNS: "shop", oName: "web-tls",
		oRefs: []any{"Deployment.apps/shop/web"},
	}, got.Attributes().AsRaw())
}

func TestBatchCounts(t *testing.T) {
	h := newHarness(t, createDefaultConfig().(*Config), nil)
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	require.NoError(t, lrs.AppendEmpty().Attributes().FromRaw(map[string]any{klogFmt: "text", "pod": "a/b"}))
	require.NoError(t, lrs.AppendEmpty().Attributes().FromRaw(map[string]any{klogFmt: "json", "pod": "b"}))
	require.NoError(t, lrs.AppendEmpty().Attributes().FromRaw(map[string]any{"pod": "a/b"}))
	require.NoError(t, h.proc.ConsumeLogs(context.Background(), ld))
	assert.Equal(t, int64(3), h.counter(metricProcessed, ""))
	assert.Equal(t, int64(1), h.counter(metricIgnored, ""))
	assert.Equal(t, int64(1), h.counter(metricNormalized, ""))
	assert.Equal(t, int64(1), h.counter(metricRejected, "missing_namespace"))
}

// TestSameAttributesAsTheEventsReceiver: kube_events writes an Event's regarding and related
// objects with objref.Canonicalize and objref.Put; object_ref, given the same references as a
// record's regarding/related maps, writes exactly the same object attributes.
func TestSameAttributesAsTheEventsReceiver(t *testing.T) {
	refs := []objref.Ref{
		{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web-0", UID: podUID, FieldPath: "spec.containers{app}", ResourceVersion: "4711"},
		{Kind: "Node", Name: "node-1", UID: "node-1"},
		{Kind: "Deployment", Namespace: "shop", Name: "cart", UID: podUID},
		{Kind: "Service", APIVersion: "serving.knative.dev/v1", Namespace: "default", Name: "hello"},
	}
	asMap := func(r objref.Ref) map[string]any {
		m := map[string]any{"name": r.Name}
		for k, v := range map[string]string{"kind": r.Kind, "apiVersion": r.APIVersion, "namespace": r.Namespace, "uid": r.UID, "fieldPath": r.FieldPath, "resourceVersion": r.ResourceVersion} {
			if v != "" {
				m[k] = v
			}
		}
		return m
	}
	h := newHarness(t, createDefaultConfig().(*Config), nil)
	for _, regarding := range refs {
		for _, related := range refs {
			got := h.run(map[string]any{"regarding": asMap(regarding), "related": asMap(related)}, nil).Attributes().AsRaw()
			want := pcommon.NewMap()
			for _, o := range []struct {
				set attr.ObjectSet
				ref objref.Ref
			}{{attr.Subject, regarding}, {attr.Related, related}} {
				r := o.ref
				require.Equal(t, objref.OK, objref.Canonicalize(&r))
				objref.Put(want, o.set, r)
			}
			for k, v := range want.AsRaw() {
				assert.Equal(t, v, got[k], "%s for regarding %+v, related %+v", k, regarding, related)
			}
			for k := range got {
				if strings.HasPrefix(k, "otelcol_k8s.object.") || strings.HasPrefix(k, "otelcol_k8s.related.") {
					_, ok := want.Get(k)
					assert.True(t, ok || k == oRefs, "object_ref wrote %s, the events receiver would not", k)
				}
			}
		}
	}
}
