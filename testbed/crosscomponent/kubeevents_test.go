// SPDX-License-Identifier: Apache-2.0

package crosscomponent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objspans"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver"
)

// TestKubeEventsUnderTraceContext: the trace_context extension, cluster-wide as the shipped
// events configuration runs it, watches a Pod carrying a context annotation; client-go's new
// recorder writes Events about it; kube_events (logs and traces pipelines on one instance,
// leader-elected with its checkpoint in a ConfigMap, as shipped) emits a span per Event. Under
// trace.kubernetes.io/context each span is a child of the Pod's context and the log records
// carry the Pod's trace and span id; under tracing.k8s.io/traceparent the link stays a link
// end to end (trace_context design.md rule 10): each span is in the Pod's own trace, linked to
// the context, and the log records carry no trace id.
func TestKubeEventsUnderTraceContext(t *testing.T) {
	cluster, client := apiServer(t)
	for _, tc := range []struct {
		name, ns string
		scheme   objecttrace.Scheme
	}{
		{"parent key", "parent-key", objecttrace.SchemeContext},
		{"link key", "link-key", objecttrace.SchemeTraceparent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ensureNamespace(t, client, tc.ns)
			kubeEventsUnderTraceContext(t, cluster.Kubeconfig, client, tc.ns, tc.scheme)
		})
	}
}

func kubeEventsUnderTraceContext(t *testing.T, kubeconfig string, client kubernetes.Interface, ns string, sch objecttrace.Scheme) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	link := sch == objecttrace.SchemeTraceparent

	tp := sdktrace.NewTracerProvider()
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	podCtx, podSpan := tp.Tracer("test-controller").Start(ctx, "create pod")
	podSpan.End()
	want := podSpan.SpanContext()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "traced-0", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
	require.True(t, objecttrace.EncodeContextIntoObject(podCtx, p, objecttrace.EncodeOptions{Scheme: sch}))
	p, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	require.NoError(t, err)

	ext := startTraceContext(t, kubeconfig, "")
	f := kubeeventsreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*kubeeventsreceiver.Config)
	cfg.Kubeconfig, cfg.ClusterName = kubeconfig, "test"
	cfg.Namespaces = []string{ns}
	cfg.TraceContext = &traceContextID
	cfg.LeaderElection.Enabled = true
	cfg.LeaderElection.LeaseName, cfg.LeaderElection.LeaseNamespace, cfg.LeaderElection.Identity = "otelcol-k8s-events", ns, "test"
	cfg.Checkpoint.Interval = 100 * time.Millisecond
	logSink, spanSink := &consumertest.LogsSink{}, &consumertest.TracesSink{}
	set := receivertest.NewNopSettings(f.Type())
	lr, err := f.CreateLogs(ctx, set, cfg, logSink)
	require.NoError(t, err)
	tr, err := f.CreateTraces(ctx, set, cfg, spanSink)
	require.NoError(t, err)
	h := host{traceContextID: ext}
	require.NoError(t, lr.Start(ctx, h))
	require.NoError(t, tr.Start(ctx, h))
	defer func() {
		require.NoError(t, lr.Shutdown(context.Background()))
		require.NoError(t, tr.Shutdown(context.Background()))
	}()
	// Its first start reports only what happens from then on: wait until it watches (its
	// checkpoint exists).
	require.Eventually(t, func() bool {
		_, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "otelcol-k8s-events-checkpoint", metav1.GetOptions{})
		return err == nil
	}, 60*time.Second, 50*time.Millisecond)

	nb := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	require.NoError(t, nb.StartRecordingToSinkWithContext(ctx))
	defer nb.Shutdown()
	rec := nb.NewRecorder(scheme.Scheme, "test/kubelet")
	rec.Eventf(p, nil, corev1.EventTypeNormal, "Scheduled", "Bind", "Successfully assigned")
	rec.Eventf(p, nil, corev1.EventTypeWarning, "BackOff", "Restart", "Back-off restarting failed container")
	require.Eventually(t, func() bool { return spanSink.SpanCount() == 2 && logSink.LogRecordCount() == 2 }, 30*time.Second, 20*time.Millisecond)

	reasons := map[string]bool{}
	for _, td := range spanSink.AllTraces() {
		for _, sp := range allSpans(td) {
			reason, _ := sp.Attributes().Get(attr.EventReason)
			reasons[reason.Str()] = true
			uid, _ := sp.Attributes().Get(attr.ObjectUID)
			if link {
				assert.Equal(t, objspans.TraceID(string(p.UID), 1), sp.TraceID(), "%s: the Pod's own trace", reason.Str())
				assert.Equal(t, objspans.RootSpanID(string(p.UID), 1), sp.ParentSpanID(), "%s: under its lifecycle root", reason.Str())
				require.Equal(t, 1, sp.Links().Len(), reason.Str())
				assert.Equal(t, pcommon.TraceID(want.TraceID()), sp.Links().At(0).TraceID(), reason.Str())
				assert.Equal(t, pcommon.SpanID(want.SpanID()), sp.Links().At(0).SpanID(), reason.Str())
			} else {
				assert.Equal(t, pcommon.TraceID(want.TraceID()), sp.TraceID(), reason.Str())
				assert.Equal(t, pcommon.SpanID(want.SpanID()), sp.ParentSpanID(), reason.Str())
				assert.Zero(t, sp.Links().Len(), reason.Str())
			}
			assert.Equal(t, string(p.UID), uid.Str(), reason.Str())
			assert.Equal(t, "Pod."+reason.Str(), sp.Name())
		}
	}
	assert.Equal(t, map[string]bool{"Scheduled": true, "BackOff": true}, reasons)
	for _, ld := range logSink.AllLogs() {
		for _, lr := range allRecords(ld) {
			if link { // a log record has no link: it does not take the linked trace's id
				assert.True(t, lr.TraceID().IsEmpty())
				assert.True(t, lr.SpanID().IsEmpty())
				continue
			}
			assert.Equal(t, pcommon.TraceID(want.TraceID()), lr.TraceID())
			assert.Equal(t, pcommon.SpanID(want.SpanID()), lr.SpanID())
		}
	}
}

func allSpans(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for i := range td.ResourceSpans().Len() {
		ss := td.ResourceSpans().At(i).ScopeSpans()
		for j := range ss.Len() {
			for k := range ss.At(j).Spans().Len() {
				out = append(out, ss.At(j).Spans().At(k))
			}
		}
	}
	return out
}

func allRecords(ld plog.Logs) []plog.LogRecord {
	var out []plog.LogRecord
	for i := range ld.ResourceLogs().Len() {
		sl := ld.ResourceLogs().At(i).ScopeLogs()
		for j := range sl.Len() {
			for k := range sl.At(j).LogRecords().Len() {
				out = append(out, sl.At(j).LogRecords().At(k))
			}
		}
	}
	return out
}
