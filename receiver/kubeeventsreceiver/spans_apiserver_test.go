// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/tracesource"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

// annotationSource is a trace context source that reads the context annotation of the object
// a look-up names from the API server, each time. It stands in for the trace_context extension,
// which this module does not require (no component module requires another); the two run
// together in testbed/crosscomponent.
type annotationSource struct {
	component.StartFunc
	component.ShutdownFunc
	client kubernetes.Interface
}

func (s annotationSource) SpanContextForObject(ctx context.Context, apiVersion, kind, namespace, name, uid string) (trace.SpanContext, bool, bool) {
	if apiVersion != "v1" || kind != "Pod" {
		return trace.SpanContext{}, false, false
	}
	p, err := s.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil || (uid != "" && string(p.UID) != uid) {
		return trace.SpanContext{}, false, false
	}
	sc, scheme, err := objecttrace.SpanContextFromAnnotations(p.Annotations)
	return sc, scheme == objecttrace.SchemeTraceparent, err == nil && sc.IsValid()
}

// TestSpansAgainstAPIServer: a Pod carries a context annotation; client-go's new recorder
// writes Events about it; the receiver (logs and traces pipelines on one instance, as the
// factory shares it), asking a trace context source, emits a span per singleton and per
// finished series, children of the Pod's context, and log records carrying the Pod's trace and
// span id. A restart in the middle finishes the series in the second run with the span id the
// first run gave the Event.
func TestSpansAgainstAPIServer(t *testing.T) {
	cluster, client := apiServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ns = "default"

	// A controller's span, carried by the Pod it created.
	tp := sdktrace.NewTracerProvider()
	defer func() { require.NoError(t, tp.Shutdown(ctx)) }()
	podCtx, podSpan := tp.Tracer("test-controller").Start(ctx, "create pod")
	podSpan.End()
	want := podSpan.SpanContext()
	_, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "traced-0", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
	require.True(t, objecttrace.EncodeContextIntoObject(podCtx, p, objecttrace.EncodeOptions{}))
	p, err = client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	require.NoError(t, err)

	extID := component.MustNewID("trace_context")
	var ext component.Component = annotationSource{client: client}
	src := ext.(tracesource.Source)
	sc, link, ok := src.SpanContextForObject(ctx, "v1", "Pod", ns, p.Name, string(p.UID))
	require.True(t, ok)
	require.False(t, link, "trace.kubernetes.io/context: a parent")
	require.Equal(t, want.TraceID(), sc.TraceID())
	require.Equal(t, want.SpanID(), sc.SpanID())

	storeID, mem, host := memHost(map[component.ID]component.Component{extID: ext})
	cfg := testReceiverConfig(cluster.Kubeconfig, &storeID)
	cfg.TraceContext = &extID
	// A short finish window, so the recorder's final write (older than the window when written)
	// can carry a last occurrence after the Event's first without waiting 6 minutes. Not shorter:
	// on a loaded machine the series' first write may reach the API server a second or more
	// after the occurrence it records, and would then read as the series' final write.
	cfg.Series.FinishWindow = 4 * time.Second
	logSink, spanSink := &consumertest.LogsSink{}, &consumertest.TracesSink{}
	got := seen{logSink}
	start := func() *kubeEventsReceiver {
		f := NewFactory()
		set := receivertest.NewNopSettings(metadata.Type)
		lr, err := f.CreateLogs(ctx, set, cfg, logSink)
		require.NoError(t, err)
		tr, err := f.CreateTraces(ctx, set, cfg, spanSink)
		require.NoError(t, err)
		require.Same(t, lr, tr, "one receiver serves both pipelines")
		require.NoError(t, lr.Start(ctx, host))
		require.NoError(t, tr.Start(ctx, host))
		return lr.(*kubeEventsReceiver)
	}
	stop := func(r *kubeEventsReceiver) {
		require.NoError(t, r.Shutdown(ctx))
		require.NoError(t, r.Shutdown(ctx))
	}
	r := start()
	waitCheckpoint(t, mem)

	nb := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	require.NoError(t, nb.StartRecordingToSinkWithContext(ctx))
	defer nb.Shutdown()
	rec := nb.NewRecorder(scheme.Scheme, "test/kubelet")
	rec.Eventf(p, nil, corev1.EventTypeNormal, "Scheduled", "Bind", "Successfully assigned")
	rec.Eventf(p, nil, corev1.EventTypeWarning, "BackOff", "Restart", "Back-off restarting failed container")
	require.Eventually(t, func() bool { return got.counts()["BackOff singleton"] == 1 }, 20*time.Second, 20*time.Millisecond)
	rec.Eventf(p, nil, corev1.EventTypeWarning, "BackOff", "Restart", "Back-off restarting failed container")
	require.Eventually(t, func() bool {
		c := got.counts()
		return c["Scheduled singleton"] == 1 && c["BackOff start"] == 1
	}, 20*time.Second, 20*time.Millisecond, "%v", got.counts())
	if !assert.Eventually(t, func() bool { return len(ownSpans(spanSink)) == 2 }, 20*time.Second, 20*time.Millisecond) {
		t.Fatalf("spans: %v", spanNames(spanSink))
	}

	// Restart; the recorder's final write of the series arrives while nobody watches.
	stop(r)
	backoff := findEvent(t, client, ns, "BackOff")
	last := backoff.EventTime.Add(500 * time.Millisecond).Truncate(time.Microsecond)
	require.Eventually(t, func() bool { return time.Since(last) > 2*cfg.Series.FinishWindow }, 3*cfg.Series.FinishWindow, 50*time.Millisecond)
	seriesPatch(t, client, ns, backoff.Name, 12, last)
	r = start()
	defer stop(r)
	require.Eventually(t, func() bool { return got.counts()["BackOff finished"] == 1 }, 30*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return len(ownSpans(spanSink)) == 3 }, 20*time.Second, 20*time.Millisecond, "spans: %v", spanNames(spanSink))

	spans := map[string]ptrace.Span{} // by spanKey
	for _, sp := range ownSpans(spanSink) {
		spans[spanKey(sp)] = sp
	}
	require.Len(t, spans, 3)
	for key, sp := range spans {
		assert.Equal(t, pcommon.TraceID(want.TraceID()), sp.TraceID(), key)
		assert.Equal(t, pcommon.SpanID(want.SpanID()), sp.ParentSpanID(), key)
		assert.Equal(t, string(p.UID), str2(sp.Attributes(), attr.ObjectUID), key)
	}
	scheduled, single, finished := spans["Scheduled singleton"], spans["BackOff singleton"], spans["BackOff finished"]
	assert.Equal(t, "Pod.Scheduled", scheduled.Name())
	assert.Equal(t, ptrace.StatusCodeUnset, scheduled.Status().Code())
	assert.Equal(t, scheduled.StartTimestamp(), scheduled.EndTimestamp())
	assert.Equal(t, "Pod.BackOff", finished.Name())
	assert.Equal(t, ptrace.StatusCodeError, finished.Status().Code())
	// The singleton and the series it became are two spans (design.md rule 9.4): the series'
	// id is derived from the Event and its final count, by whichever run sees it finish.
	assert.NotEqual(t, single.SpanID(), finished.SpanID(), "no span id is reused for another span")
	assert.NotEqual(t, scheduled.SpanID(), finished.SpanID())
	ref := canonicalRef(fromEventsV1(backoff).Regarding)
	assert.Equal(t, eventSpanID(ref, string(backoff.UID), 1), single.SpanID())
	assert.Equal(t, eventSpanID(ref, string(backoff.UID), 12), finished.SpanID())
	assert.Equal(t, single.StartTimestamp(), single.EndTimestamp())
	assert.Equal(t, single.StartTimestamp(), finished.StartTimestamp(), "both begin at the first occurrence")
	assert.Equal(t, backoff.EventTime.UTC(), finished.StartTimestamp().AsTime(), "start: the first occurrence")
	assert.Equal(t, last.UTC(), finished.EndTimestamp().AsTime(), "end: the last occurrence")
	count, _ := finished.Attributes().Get(attr.EventCount)
	assert.Equal(t, int64(12), count.Int())
	assert.Equal(t, "Back-off restarting failed container", str2(finished.Attributes(), attr.EventNote))

	// Every log record carries the Pod's trace and span id.
	require.Len(t, got.records(), 4)
	for _, lr := range got.records() {
		assert.Equal(t, pcommon.TraceID(want.TraceID()), lr.TraceID())
		assert.Equal(t, pcommon.SpanID(want.SpanID()), lr.SpanID())
	}
	assert.Equal(t, trace.FlagsSampled, want.TraceFlags())
}

// ownSpans is every span of the Events the test wrote, not of the API server's own (seen.records).
func ownSpans(sink *consumertest.TracesSink) []ptrace.Span {
	var out []ptrace.Span
	for _, tr := range sink.AllTraces() {
		for _, sp := range spansOf(tr) {
			if !fromAPIServer(sp.Attributes()) {
				out = append(out, sp)
			}
		}
	}
	return out
}

// spanCounts is how many of ownSpans each spanKey got, as seen.counts is for records.
func spanCounts(sink *consumertest.TracesSink) map[string]int {
	out := map[string]int{}
	for _, sp := range ownSpans(sink) {
		out[spanKey(sp)]++
	}
	return out
}

// spanNames lists the spans a sink holds by spanKey, for failure messages.
func spanNames(sink *consumertest.TracesSink) []string {
	var names []string
	for _, tr := range sink.AllTraces() {
		for _, sp := range spansOf(tr) {
			names = append(names, spanKey(sp))
		}
	}
	return names
}

// spanKey names an Event span by "reason state", e.g. "BackOff finished".
func spanKey(sp ptrace.Span) string {
	return str2(sp.Attributes(), attr.EventReason) + " " + str2(sp.Attributes(), attr.EventSeriesState)
}
