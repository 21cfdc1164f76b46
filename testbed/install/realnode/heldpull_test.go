// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/kubenode"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localxray"
)

// The scopes of the spans the collectors make themselves.
const (
	lifecycleScope = "github.com/otelcol-k8s/otelcol-k8s/receiver/kubelifecyclereceiver"
	eventsScope    = "github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver"
)

// heldPull is how long the registry holds the image's layer.
const heldPull = 3 * time.Minute

// sourcedSpan is a span with its resource and scope.
type sourcedSpan struct {
	ptrace.Span
	resource pcommon.Map
	scope    string
}

// sourcedSpans lists every span the X-Ray endpoint accepted, with its resource and scope.
func sourcedSpans(x *localxray.Server) []sourcedSpan {
	var out []sourcedSpan
	for _, b := range x.Batches() {
		rss := b.Traces.ResourceSpans()
		for i := range rss.Len() {
			rs := rss.At(i)
			for j := range rs.ScopeSpans().Len() {
				ss := rs.ScopeSpans().At(j)
				for k := range ss.Spans().Len() {
					out = append(out, sourcedSpan{Span: ss.Spans().At(k), resource: rs.Resource().Attributes(), scope: ss.Scope().Name()})
				}
			}
		}
	}
	return out
}

// postOTLPSpan sends one span, as a kubelet configured for tracing would, to the node agent's
// OTLP/HTTP receiver (the chart's traces.otlp, on the node's loopback).
func postOTLPSpan(t *testing.T, service string, traceID pcommon.TraceID) error {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(attr.ServiceName, service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("realnode-probe")
	s := ss.Spans().AppendEmpty()
	s.SetName("probe")
	s.SetTraceID(traceID)
	s.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	now := time.Now()
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1:4318/v1/traces", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the node agent's OTLP/HTTP receiver answered %d", resp.StatusCode)
	}
	return nil
}

// tracingOn starts a local X-Ray endpoint (SigV4-verifying, with the Secret's credentials) and
// turns tracing on with `helm upgrade` (traces.enabled, the endpoint pointed at it); tracing
// is turned off again when the test ends.
func tracingOn(t *testing.T, e *env) *localxray.Server {
	t.Helper()
	xray := localxray.New(localxray.Config{Credentials: map[string]string{accessKey: secretKey}})
	endpoint, err := xray.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = xray.Close() })
	upgraded := metav1.Now().Truncate(time.Second)
	upgrade(t, e, map[string]any{"traces": map[string]any{"enabled": true, "endpoint": endpoint}})
	t.Cleanup(func() { upgrade(t, e, map[string]any{"traces": map[string]any{"enabled": false}}) })
	waitTracingLeader(t, e, upgraded)
	return xray
}

// waitTracingLeader waits until the events collector that leads is one the upgrade started
// (its Pod created after upgraded and not terminating), and its first list is done: the
// rollout traces follow kube_events' leadership (kube_lifecycle design.md rule 7), so until
// then the leader may be the previous collector, without tracing.
func waitTracingLeader(t *testing.T, e *env, upgraded time.Time) {
	t.Helper()
	ctx := context.Background()
	lease := release + "-events"
	require.Eventually(t, func() bool {
		l, err := e.node.Client.CoordinationV1().Leases(namespace).Get(ctx, lease, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		p, err := e.node.Client.CoreV1().Pods(namespace).Get(ctx, *l.Spec.HolderIdentity, metav1.GetOptions{})
		return err == nil && p.DeletionTimestamp == nil && !p.CreationTimestamp.Time.Before(upgraded)
	}, 3*time.Minute, 250*time.Millisecond, "the Lease %s held by an events collector of the upgrade", lease)
	require.NoError(t, e.waitEventsLive(ctx))
}

// TestHeldImagePull (issue 35): a Pod whose image comes from a registry on the node's loopback
// that holds the image's layer for three minutes. Its lifecycle trace has a container start
// span of the pull's real duration, without error, saying what the container waited for; the
// Pod's later spans follow it and the trace ends at Ready without error. The same run checks
// the resource of every kind of span at the X-Ray endpoint: the node agent's (kube_lifecycle),
// the OTLP receiver's (a span posted as the kubelet would) and the events collector's
// (kube_events, rollouts) carry the cluster, the node where it applies and service.name.
func TestHeldImagePull(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	ensureWorkNamespace(t, e)
	ctx := context.Background()
	cs := e.node.Client

	xray := tracingOn(t, e)

	reg, err := kubenode.StartRegistry()
	require.NoError(t, err)
	t.Cleanup(func() { _ = reg.Close() })
	require.NoError(t, e.node.UseRegistry(reg.Host))
	// The loggen image with a layer of this run's own: the node holds loggen's layer already
	// (imported), so the pull fetches only the new one, which the registry holds.
	own := map[string][]byte{"held-pull": []byte(time.Now().UTC().Format(time.RFC3339Nano))}
	ref, layers, err := reg.Push(ctx, filepath.Join(e.node.Dir(), "images", "loggen.tar"), "held/loggen", "1", own)
	require.NoError(t, err)
	require.Len(t, layers, 2)
	held := layers[1]
	require.NoError(t, reg.HoldBlob(ctx, "held/loggen", held, heldPull))

	// The node agent with tracing on takes OTLP spans (Helm's wait can return before the
	// DaemonSet's controller replaced the Pod).
	waitProductRolledOut(t, e)
	probe := pcommon.TraceID{0x4e, 0x0d, 0xe1, 0x9b, 0xe0, 0xbe, 0x70, 0x2e, 0x0d, 0x15, 0x7a, 0x1e, 0x00, 0x00, 0x00, 0x01}
	var postErr error
	require.Eventually(t, func() bool {
		postErr = postOTLPSpan(t, "realnode-probe", probe)
		return postErr == nil
	}, 2*time.Minute, time.Second, "a span posted to the node agent's OTLP receiver: %v", postErr)

	p := loggenPod("held-pull", 10, 100, 5)
	p.Spec.Containers[0].Image, p.Spec.Containers[0].ImagePullPolicy = ref, corev1.PullIfNotPresent
	created, err := cs.CoreV1().Pods(workNamespace).Create(ctx, p, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { deletePods(t, e, []*corev1.Pod{p}) })

	require.Eventually(t, func() bool {
		got, err := cs.CoreV1().Pods(workNamespace).Get(ctx, p.Name, metav1.GetOptions{})
		return err == nil && podReady(got)
	}, heldPull+2*time.Minute, time.Second, "the Pod Ready after its held pull")
	requested, served := reg.Downloads(held)
	require.NotEmpty(t, requested, "containerd asked the registry for the layer")
	require.NotEmpty(t, served, "the layer went out")
	pull := served[0].Sub(requested[0])
	t.Logf("the layer was asked for %v after the Pod's creation, held, and sent %v later (%d requests)",
		requested[0].Sub(created.CreationTimestamp.Time).Round(time.Second), pull.Round(time.Second), len(requested))

	// The Pod's lifecycle trace, the probe span, and an events collector span.
	var spans []sourcedSpan
	byName := map[string]sourcedSpan{}
	require.Eventually(t, func() bool {
		spans = sourcedSpans(xray)
		byName = map[string]sourcedSpan{}
		var root pcommon.TraceID
		for _, s := range spans {
			if v, ok := s.Attributes().Get(attr.Subject.Name); ok && v.Str() == p.Name && s.Name() == "Pod start" {
				root = s.TraceID()
			}
		}
		probed, events := false, false
		for _, s := range spans {
			if s.TraceID() == root && !root.IsEmpty() {
				byName[s.Name()] = s
			}
			probed = probed || s.TraceID() == probe
			events = events || s.scope == eventsScope
		}
		return byName["Pod start"].scope != "" && byName["Ready"].scope != "" && byName["container start"].scope != "" && probed && events
	}, 2*time.Minute, time.Second, "the held Pod's lifecycle spans %v, the probe and an events collector span", slices.Collect(func(yield func(string) bool) {
		for k := range byName {
			if !yield(k) {
				return
			}
		}
	}))

	root, start, ready := byName["Pod start"], byName["container start"], byName["Ready"]
	took := func(s sourcedSpan) time.Duration { return s.EndTimestamp().AsTime().Sub(s.StartTimestamp().AsTime()) }
	t.Logf("Pod start %v, container start %v (%v), Ready ends %v after the container start",
		took(root), took(start), start.Status().Message(), ready.EndTimestamp().AsTime().Sub(start.EndTimestamp().AsTime()))
	assert.Equal(t, ptrace.StatusCodeUnset, root.Status().Code(), "a slow pull is not an error: %s", root.Status().Message())
	if v, ok := root.Attributes().Get(attr.LifecycleOutcome); assert.True(t, ok) {
		assert.Equal(t, "ready", v.Str())
	}
	assert.Equal(t, ptrace.StatusCodeUnset, start.Status().Code(), "the container start span: %s", start.Status().Message())
	// The span is the pull's real duration (the API's times have second precision; the
	// kubelet asks for the image a moment after the Pod's creation and starts the container a
	// moment after the pull).
	assert.GreaterOrEqual(t, took(start), heldPull-2*time.Second, "the container start span holds the pull")
	assert.LessOrEqual(t, took(start), heldPull+30*time.Second, "the container start span is the pull, not more")
	if w, ok := start.Attributes().Get(attr.LifecycleWaiting); assert.True(t, ok, "what the container waited for") {
		assert.Contains(t, w.Slice().AsRaw(), "loggen: ContainerCreating", "the kubelet's waiting reason while pulling")
	}
	// The Pod's later spans follow the pull.
	for _, name := range []string{"ContainersReady", "Ready"} {
		s := byName[name]
		if assert.NotEmpty(t, s.scope, "the %s span", name) {
			assert.GreaterOrEqual(t, s.EndTimestamp().AsTime(), start.EndTimestamp().AsTime().Add(-time.Second), "%s after the pull", name)
			assert.Equal(t, ptrace.StatusCodeUnset, s.Status().Code())
		}
	}

	// Every span's resource.
	for _, s := range spans {
		kind := "the node agent's " + s.scope
		want := map[string]string{attr.K8sClusterName: cluster, attr.K8sNodeName: kubenode.NodeName, attr.ServiceName: "otelcol-k8s-node"}
		switch {
		case s.TraceID() == probe:
			kind = "the OTLP receiver's"
			want[attr.ServiceName] = "realnode-probe" // the sender's own stays
		case s.scope == eventsScope || s.scope == lifecycleScope && (strings.HasPrefix(s.Name(), "Deployment ") || strings.HasPrefix(s.Name(), "ReplicaSet ")):
			kind = "the events collector's " + s.scope
			want = map[string]string{attr.K8sClusterName: cluster, attr.ServiceName: "otelcol-k8s"}
		}
		got := map[string]string{}
		for _, k := range []string{attr.K8sClusterName, attr.K8sNodeName, attr.ServiceName} {
			if v, ok := s.resource.Get(k); ok {
				got[k] = v.Str()
			}
		}
		assert.Equal(t, want, got, "the resource of %s span %q", kind, s.Name())
	}
}
