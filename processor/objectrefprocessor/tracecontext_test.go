// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/namefilter"
	"github.com/otelcol-k8s/otelcol-k8s/processor/objectrefprocessor/internal/metadata"
)

// objectKey identifies an object in the test extension.
type objectKey struct{ apiVersion, kind, namespace, name string }

// fakeTraceContexts is a test-only extension that knows the trace context of a few objects, as
// the trace_context extension will from the objects' trace.kubernetes.io/context annotation.
// It does not import anything from this package but the test's types.
type fakeTraceContexts struct {
	component.StartFunc
	component.ShutdownFunc
	objects map[objectKey]trace.SpanContext
	links   map[objectKey]bool // objects whose context is a link (tracing.k8s.io/traceparent)
	calls   []objectKey
	uids    []string
}

func (f *fakeTraceContexts) SpanContextForObject(_ context.Context, apiVersion, kind, namespace, name, uid string) (trace.SpanContext, bool, bool) {
	k := objectKey{apiVersion, kind, namespace, name}
	f.calls = append(f.calls, k)
	f.uids = append(f.uids, uid)
	sc, ok := f.objects[k]
	return sc, f.links[k], ok
}

// plainExtension is an extension without the method.
type plainExtension struct {
	component.StartFunc
	component.ShutdownFunc
}

type hostWith map[component.ID]component.Component

func (h hostWith) GetExtensions() map[component.ID]component.Component { return h }

func spanContext(t *testing.T, traceHex, spanHex string, sampled bool) trace.SpanContext {
	t.Helper()
	tid, err := trace.TraceIDFromHex(traceHex)
	require.NoError(t, err)
	sid, err := trace.SpanIDFromHex(spanHex)
	require.NoError(t, err)
	var flags trace.TraceFlags
	if sampled {
		flags = trace.FlagsSampled
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, Remote: true})
}

func TestTraceCorrelation(t *testing.T) {
	extID := component.MustNewID("trace_context")
	podSC := spanContext(t, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", true)
	nodeSC := spanContext(t, "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", false)
	linkSC := spanContext(t, "5bf92f3577b34da6a3ce929d0e0e4737", "10f067aa0ba902b8", true)
	ext := &fakeTraceContexts{objects: map[objectKey]trace.SpanContext{
		{"v1", "Pod", "default", "web-0"}:    podSC,
		{"v1", "Node", "", "node-1"}:         nodeSC,
		{"apps/v1", "Deployment", "a", "x"}:  {}, // known object without a trace context
		{"v1", "Pod", "default", "linked-0"}: linkSC,
	}, links: map[objectKey]bool{{"v1", "Pod", "default", "linked-0"}: true}}
	cfg := createDefaultConfig().(*Config)
	cfg.TraceContext = &extID
	h := newHarness(t, cfg, hostWith{extID: ext})

	t.Run("pod subject", func(t *testing.T) {
		ext.calls, ext.uids = nil, nil
		lr := h.run(map[string]any{"pod": "default/web-0", "podUID": podUID}, nil)
		assert.Equal(t, pcommon.TraceID(podSC.TraceID()), lr.TraceID())
		assert.Equal(t, pcommon.SpanID(podSC.SpanID()), lr.SpanID())
		assert.True(t, lr.Flags().IsSampled())
		assert.Equal(t, []objectKey{{"v1", "Pod", "default", "web-0"}}, ext.calls)
		assert.Equal(t, []string{podUID}, ext.uids, "the uid known from the log is passed on")
	})
	t.Run("first object with a context wins", func(t *testing.T) {
		ext.calls = nil
		lr := h.run(map[string]any{"pod": "default/unknown", "deployment": "default/x", "node": "node-1"}, nil)
		assert.Equal(t, pcommon.TraceID(nodeSC.TraceID()), lr.TraceID())
		assert.Equal(t, pcommon.SpanID(nodeSC.SpanID()), lr.SpanID())
		assert.False(t, lr.Flags().IsSampled())
		assert.Equal(t, []objectKey{
			{"v1", "Pod", "default", "unknown"},
			{"v1", "Node", "", "node-1"},
		}, ext.calls, "the subject, then the other objects in key-table order, stopping at the first answer")
	})
	t.Run("event regarding states its apiVersion", func(t *testing.T) {
		lr := h.run(map[string]any{"regarding": eventRegardingPod()}, nil)
		assert.Equal(t, pcommon.TraceID(podSC.TraceID()), lr.TraceID())
	})
	t.Run("a link context is not the record's trace: the next object's is", func(t *testing.T) {
		ext.calls = nil
		lr := h.run(map[string]any{"pod": "default/linked-0", "node": "node-1"}, nil)
		assert.Equal(t, pcommon.TraceID(nodeSC.TraceID()), lr.TraceID())
		assert.Equal(t, []objectKey{{"v1", "Pod", "default", "linked-0"}, {"v1", "Node", "", "node-1"}}, ext.calls)
		lr = h.run(map[string]any{"pod": "default/linked-0"}, nil)
		assert.True(t, lr.TraceID().IsEmpty())
		assert.True(t, lr.SpanID().IsEmpty())
	})
	t.Run("object without a context", func(t *testing.T) {
		lr := h.run(map[string]any{"deployment": "a/x"}, nil)
		assert.True(t, lr.TraceID().IsEmpty())
		assert.True(t, lr.SpanID().IsEmpty())
	})
	t.Run("record with its own trace id keeps it", func(t *testing.T) {
		ld := plog.NewLogs()
		lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.Attributes().PutStr("pod", "default/web-0")
		lr.Attributes().PutStr(klogFmt, "text")
		own := pcommon.TraceID{1, 2, 3}
		lr.SetTraceID(own)
		h.sink.Reset()
		require.NoError(t, h.proc.ConsumeLogs(context.Background(), ld))
		got := h.sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
		assert.Equal(t, own, got.TraceID())
	})
	t.Run("rejected references are not looked up", func(t *testing.T) {
		ext.calls = nil
		h.run(map[string]any{"pod": "web-0", "node": "Not A Node"}, nil)
		assert.Empty(t, ext.calls)
	})
	t.Run("an event's related object is looked up too", func(t *testing.T) {
		ext.calls = nil
		lr := h.run(map[string]any{"regarding": map[string]any{"kind": "Deployment", "namespace": "a", "name": "x"}, "related": eventRegardingPod()}, nil)
		assert.Equal(t, pcommon.TraceID(podSC.TraceID()), lr.TraceID())
		assert.Equal(t, []objectKey{{"apps/v1", "Deployment", "a", "x"}, {"v1", "Pod", "default", "web-0"}}, ext.calls)
	})
	t.Run("records that are not declared input are not looked up", func(t *testing.T) {
		ext.calls = nil
		lr := h.runRaw(nil, map[string]any{"pod": "default/web-0"}, nil)
		assert.True(t, lr.TraceID().IsEmpty())
		assert.Empty(t, ext.calls)
	})
	assert.Equal(t, int64(5), h.counter(metricCorrelated, ""))
}

// heldTraceContexts is fakeTraceContexts with the optional TraceContextsHeld method.
type heldTraceContexts struct {
	fakeTraceContexts
	held bool
}

func (f *heldTraceContexts) TraceContextsHeld() bool { return f.held }

// TestTraceContextsHeld checks that a source saying it holds no context is not asked per record,
// and is asked again in the next batch once it holds one.
func TestTraceContextsHeld(t *testing.T) {
	extID := component.MustNewID("trace_context")
	podSC := spanContext(t, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", true)
	ext := &heldTraceContexts{fakeTraceContexts: fakeTraceContexts{objects: map[objectKey]trace.SpanContext{
		{"v1", "Pod", "default", "web-0"}: podSC,
	}}}
	cfg := createDefaultConfig().(*Config)
	cfg.TraceContext = &extID
	h := newHarness(t, cfg, hostWith{extID: ext})

	lr := h.run(map[string]any{"pod": "default/web-0", "node": "node-1"}, nil)
	assert.True(t, lr.TraceID().IsEmpty())
	assert.Empty(t, ext.calls, "nothing held: no look-up")

	ext.held = true
	lr = h.run(map[string]any{"pod": "default/web-0", "node": "node-1"}, nil)
	assert.Equal(t, pcommon.TraceID(podSC.TraceID()), lr.TraceID())
	assert.Equal(t, []objectKey{{"v1", "Pod", "default", "web-0"}}, ext.calls)
}

// namedTraceContexts is fakeTraceContexts with the optional TraceContextNames method.
type namedTraceContexts struct {
	fakeTraceContexts
	names *namefilter.Filter
}

func (f *namedTraceContexts) TraceContextNames() *namefilter.Filter { return f.names }

// TestTraceContextNames checks that an object whose name the source's filter does not contain
// is not asked about, unless the record states its uid, and that one it may contain is.
func TestTraceContextNames(t *testing.T) {
	extID := component.MustNewID("trace_context")
	podSC := spanContext(t, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", true)
	ext := &namedTraceContexts{
		fakeTraceContexts: fakeTraceContexts{objects: map[objectKey]trace.SpanContext{{"v1", "Pod", "default", "web-0"}: podSC}},
		names:             namefilter.New(),
	}
	ext.names.SetKinds([]string{"Pod"})
	ext.names.Add("web-0")
	cfg := createDefaultConfig().(*Config)
	cfg.TraceContext = &extID
	h := newHarness(t, cfg, hostWith{extID: ext})

	tests := []struct {
		name      string
		attrs     map[string]any
		wantCalls []objectKey
		wantTrace bool
	}{
		{
			name: "a name in the filter is asked about", attrs: map[string]any{"pod": "default/web-0", "node": "node-1"},
			wantCalls: []objectKey{{"v1", "Pod", "default", "web-0"}}, wantTrace: true,
		},
		{
			name: "neither the name nor the kind in the filter: no call", attrs: map[string]any{"pod": "default/web-1", "node": "node-1"},
			wantCalls: nil,
		},
		{
			name: "a uid is always asked about", attrs: map[string]any{"pod": "default/web-1", "podUID": podUID},
			wantCalls: []objectKey{{"v1", "Pod", "default", "web-1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ext.calls = nil
			lr := h.run(tt.attrs, nil)
			assert.Equal(t, tt.wantCalls, ext.calls)
			assert.Equal(t, tt.wantTrace, !lr.TraceID().IsEmpty())
		})
	}
}

func TestTraceContextStartErrors(t *testing.T) {
	extID := component.MustNewID("trace_context")
	tests := []struct {
		name    string
		host    component.Host
		wantErr string
	}{
		{"not configured", componenttest.NewNopHost(), `extension "trace_context" is not configured`},
		{"wrong type", hostWith{extID: &plainExtension{}}, `extension "trace_context" (*objectrefprocessor.plainExtension) does not implement SpanContextForObject`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.TraceContext = &extID
			p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, nil)
			require.NoError(t, err)
			require.ErrorContains(t, p.Start(context.Background(), tt.host), tt.wantErr)
			require.NoError(t, p.Shutdown(context.Background()))
		})
	}
}

// The fake must satisfy the interface structurally, as the real extension will.
var _ TraceContextSource = (*fakeTraceContexts)(nil)

// TestOwnPod checks own_pod: a record that names no object with a context gets the context of
// the Pod that wrote it (its own or its traced owner's, as the source answers), looked up by the
// resource's uid, else its namespace and name; a context the record already has, or one of an
// object it names, wins; without own_pod nothing changes.
func TestOwnPod(t *testing.T) {
	extID := component.MustNewID("trace_context")
	podSC := spanContext(t, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", true)
	nodeSC := spanContext(t, "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", false)
	ext := &fakeTraceContexts{objects: map[objectKey]trace.SpanContext{
		{"v1", "Pod", "shop", "web-0"}:    podSC,
		{"v1", "Node", "", "node-1"}:      nodeSC,
		{"v1", "Pod", "shop", "linked-0"}: podSC,
	}, links: map[objectKey]bool{{"v1", "Pod", "shop", "linked-0"}: true}}
	resource := map[string]any{"k8s.namespace.name": "shop", "k8s.pod.name": "web-0", "k8s.pod.uid": "u-1"}
	tests := []struct {
		name      string
		ownPod    bool
		resource  map[string]any
		attrs     map[string]any
		want      trace.SpanContext
		wantCalls []objectKey
		wantUIDs  []string
	}{
		{
			"plain line of a traced Pod", true, resource,
			map[string]any{"msg": "hello"},
			podSC,
			[]objectKey{{"v1", "Pod", "shop", "web-0"}},
			[]string{"u-1"},
		},
		{
			"not klog: not parsed, still the Pod's", true, resource,
			map[string]any{},
			podSC,
			[]objectKey{{"v1", "Pod", "shop", "web-0"}},
			[]string{"u-1"},
		},
		{
			"a named object's context wins", true, resource, withKlogFormat(map[string]any{"node": "node-1"}), nodeSC,
			[]objectKey{{"v1", "Pod", "shop", "web-0"}, {"v1", "Node", "", "node-1"}},
			[]string{"u-1", ""},
		},
		{
			"by name without a uid", true,
			map[string]any{"k8s.namespace.name": "shop", "k8s.pod.name": "web-0"},
			map[string]any{},
			podSC,
			[]objectKey{{"v1", "Pod", "shop", "web-0"}},
			[]string{""},
		},
		{
			"a Pod without context", true,
			map[string]any{"k8s.namespace.name": "shop", "k8s.pod.name": "db-0"},
			map[string]any{},
			trace.SpanContext{},
			[]objectKey{{"v1", "Pod", "shop", "db-0"}},
			[]string{""},
		},
		{
			"a Pod whose context is a link: not the record's trace", true,
			map[string]any{"k8s.namespace.name": "shop", "k8s.pod.name": "linked-0"},
			map[string]any{},
			trace.SpanContext{},
			[]objectKey{{"v1", "Pod", "shop", "linked-0"}},
			[]string{""},
		},
		{"no Pod on the resource", true, map[string]any{"k8s.namespace.name": "shop"}, map[string]any{}, trace.SpanContext{}, nil, nil},
		{"own_pod off", false, resource, map[string]any{}, trace.SpanContext{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.TraceContext, cfg.OwnPod = &extID, tt.ownPod
			h := newHarness(t, cfg, hostWith{extID: ext})
			ext.calls, ext.uids = nil, nil
			lr := h.runRaw(tt.resource, tt.attrs, nil)
			assert.Equal(t, pcommon.TraceID(tt.want.TraceID()), lr.TraceID())
			assert.Equal(t, pcommon.SpanID(tt.want.SpanID()), lr.SpanID())
			assert.Equal(t, tt.want.IsSampled(), lr.Flags().IsSampled())
			assert.Equal(t, tt.wantCalls, ext.calls)
			assert.Equal(t, tt.wantUIDs, ext.uids)
		})
	}

	t.Run("a record's own trace id is kept", func(t *testing.T) {
		cfg := createDefaultConfig().(*Config)
		cfg.TraceContext, cfg.OwnPod = &extID, true
		h := newHarness(t, cfg, hostWith{extID: ext})
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		require.NoError(t, rl.Resource().Attributes().FromRaw(resource))
		own := pcommon.TraceID{1, 2, 3}
		rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().SetTraceID(own)
		require.NoError(t, h.proc.ConsumeLogs(context.Background(), ld))
		got := h.sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
		assert.Equal(t, own, got.TraceID())
	})
}
