// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// spanSink is an OTLP/HTTP traces endpoint keeping every span it receives.
type spanSink struct {
	mu      sync.Mutex
	spans   []ptrace.Span
	changed chan struct{} // signaled after every request that brought spans
}

func (s *spanSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	td := req.Traces()
	s.mu.Lock()
	for i := range td.ResourceSpans().Len() {
		ss := td.ResourceSpans().At(i).ScopeSpans()
		for j := range ss.Len() {
			for k := range ss.At(j).Spans().Len() {
				sp := ptrace.NewSpan()
				ss.At(j).Spans().At(k).CopyTo(sp)
				s.spans = append(s.spans, sp)
			}
		}
	}
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

// find returns the spans received named spanName about the object named object ("" any).
func (s *spanSink) find(spanName, object string) []ptrace.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ptrace.Span
	for _, sp := range s.spans {
		n, _ := sp.Attributes().Get("otelcol_k8s.object.name")
		if sp.Name() == spanName && (object == "" || n.Str() == object) {
			out = append(out, sp)
		}
	}
	return out
}

func (s *spanSink) inTrace(id pcommon.TraceID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, sp := range s.spans {
		if sp.TraceID() == id {
			n++
		}
	}
	return n
}

// contextKey is the object-lifecycle tracing proposal's annotation (pkg/objecttrace).
const contextKey = "trace.kubernetes.io/context"

// traceparent is sc as a W3C traceparent.
func traceparent(sc trace.SpanContext) string {
	return fmt.Sprintf("00-%s-%s-%s", sc.TraceID(), sc.SpanID(), sc.TraceFlags())
}

// TestOneTracePerDesiredState runs kube_lifecycle (Pods and Deployments), kube_events and
// trace_context in the distribution against a real API server, the test acting as the
// Deployment controller, the ReplicaSet controller, the kubelet and their Event recorders. A
// Deployment rolled out under a sampled context gives one trace holding the rollout, each of its
// Pods' lifecycle and the spans of their Events (objspans rule 1, the receivers' design.md
// rule 3 and 9.6); one rolled out under a context whose flags say "not sampled" gives no span
// at all (objspans rule 2).
func TestOneTracePerDesiredState(t *testing.T) {
	bin := binary(t)
	a := startAPITest(t, 3*time.Minute, "default")
	cluster, kc, ctx, check := a.cluster, a.kc, a.ctx, a.check

	sink := &spanSink{changed: make(chan struct{}, 1)}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	health := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	metricsPort := freePort(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	check(os.WriteFile(cfg, []byte(fmt.Sprintf(`
extensions:
  health_check:
    endpoint: %s
  trace_context:
    kubeconfig: %[2]s
receivers:
  kube_lifecycle:
    kubeconfig: %[2]s
    kinds: [Pod, Deployment]
    trace_context: trace_context
  kube_events:
    kubeconfig: %[2]s
    trace_context: trace_context
exporters:
  otlp_http:
    traces_endpoint: %s/v1/traces
    compression: none
    sending_queue:
      enabled: false
service:
  extensions: [health_check, trace_context]
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %[4]d
  pipelines:
    traces:
      receivers: [kube_lifecycle, kube_events]
      exporters: [otlp_http]
`, health, cluster.Kubeconfig, srv.URL, metricsPort)), 0o600))
	// pendingRollouts: the rollouts kube_lifecycle follows and has not ended (its telemetry)
	pendingRollouts := func() int64 {
		return scrapeURL(t, http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
			"otelcol_receiver_kube_lifecycle_rollouts_pending", func(map[string]string) (string, bool) { return "", true })[""]
	}
	// waitPending waits until kube_lifecycle follows n rollouts
	waitPending := func(what string, n int64) {
		t.Helper()
		for pendingRollouts() != n {
			select {
			case <-ctx.Done():
				t.Fatalf("%s: kube_lifecycle follows %d rollouts, want %d", what, pendingRollouts(), n)
			case <-time.After(20 * time.Millisecond): // polling the collector's metrics
			}
		}
	}
	startCollector(t, bin, cfg, nil, health)

	rollout := func(name string, flags trace.TraceFlags, tid byte) (trace.SpanContext, []string) {
		user := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{tid, 0x5e, 1}, SpanID: trace.SpanID{tid, 1}, TraceFlags: flags})
		rsCtx := user.WithSpanID(trace.SpanID{tid, 2}) // the ReplicaSet controller's span in the user's trace
		labels := map[string]string{"app": name}
		replicas := int32(2)
		tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{
				"deployment.kubernetes.io/revision": "1", contextKey: traceparent(user),
			}},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
		}
		d, err := kc.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{})
		check(err)
		yes := true
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{
				Name: name + "-7d4b9", Namespace: "default", Annotations: map[string]string{
					"deployment.kubernetes.io/revision": "1", contextKey: traceparent(rsCtx),
				},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: name, UID: d.UID, Controller: &yes}},
			},
			Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: d.Spec.Selector, Template: tmpl},
		}
		rs, err = kc.AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{})
		check(err)
		// the Deployment controller's Event for the new ReplicaSet: kube_lifecycle follows a
		// rollout from it (its design.md rule 7)
		_, err = kc.EventsV1().Events("default").Create(ctx, &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: name + ".scaled", Namespace: "default"},
			EventTime:  metav1.NewMicroTime(time.Now()), ReportingController: "deployment-controller", ReportingInstance: "kube-controller-manager",
			Action: "ScalingReplicaSet", Reason: "ScalingReplicaSet", Type: "Normal", Note: "Scaled up replica set " + rs.Name + " from 0 to 2",
			Regarding: corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name, UID: d.UID},
		}, metav1.CreateOptions{})
		check(err)
		// the controllers work while kube_lifecycle follows the rollout: it has read the
		// Deployment (after the Event) before the Deployment reaches its desired state
		waitPending(name+" followed", 1)
		var pods []string
		for i := range 2 {
			p, err := kc.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name: fmt.Sprintf("%s-7d4b9-%d", name, i), Namespace: "default", Labels: labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}},
				},
				Spec: corev1.PodSpec{NodeName: "node-1", Containers: tmpl.Spec.Containers},
			}, metav1.CreateOptions{})
			check(err)
			pods = append(pods, p.Name)
			// the kubelet's Event, then the Pod ready
			_, err = kc.EventsV1().Events("default").Create(ctx, &eventsv1.Event{
				ObjectMeta: metav1.ObjectMeta{Name: p.Name + ".pulled", Namespace: "default"},
				EventTime:  metav1.NewMicroTime(time.Now()), ReportingController: "kubelet", ReportingInstance: "node-1",
				Action: "Pull", Reason: "Pulled", Type: "Normal", Note: "image pulled",
				Regarding: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: p.Name, UID: p.UID},
			}, metav1.CreateOptions{})
			check(err)
			now := metav1.Now()
			p.Status.Phase = corev1.PodRunning
			for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: now})
			}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{
				Name: "app", Image: "app:1", ImageID: "app@sha256:1", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			}}
			_, err = kc.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
			check(err)
		}
		rs.Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, FullyLabeledReplicas: 2, ObservedGeneration: rs.Generation}
		_, err = kc.AppsV1().ReplicaSets("default").UpdateStatus(ctx, rs, metav1.UpdateOptions{})
		check(err)
		d, err = kc.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		check(err)
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
		_, err = kc.AppsV1().Deployments("default").UpdateStatus(ctx, d, metav1.UpdateOptions{})
		check(err)
		waitPending(name+" ended", 0)
		return user, pods
	}

	// the unsampled rollout first: when the sampled one's spans have all arrived, the
	// unsampled one's would have too
	quiet, quietPods := rollout("quiet", 0, 0x0a)
	traced, tracedPods := rollout("web", trace.FlagsSampled, 0x0b)
	want := pcommon.TraceID(traced.TraceID())

	inTrace := func(spans []ptrace.Span) bool {
		for _, sp := range spans {
			if sp.TraceID() != want {
				return false
			}
		}
		return len(spans) == 1
	}
	deadline := time.After(60 * time.Second)
	all := func() bool {
		return inTrace(sink.find("Deployment rollout", "web")) &&
			inTrace(sink.find("Pod start", tracedPods[0])) && inTrace(sink.find("Pod start", tracedPods[1])) &&
			inTrace(sink.find("Pod.Pulled", tracedPods[0])) && inTrace(sink.find("Pod.Pulled", tracedPods[1]))
	}
	for !all() {
		select {
		case <-sink.changed:
			continue
		case <-deadline:
			t.Fatalf("not every span in the rollout's trace %s: rollout %d, Pod start %d+%d, Pod.Pulled %d+%d spans", want,
				len(sink.find("Deployment rollout", "web")), len(sink.find("Pod start", tracedPods[0])), len(sink.find("Pod start", tracedPods[1])),
				len(sink.find("Pod.Pulled", tracedPods[0])), len(sink.find("Pod.Pulled", tracedPods[1])))
		}
	}
	// each Pod's lifecycle root is a child of the ReplicaSet's context (the work that created
	// it); the Events' spans are children of the same context
	for _, p := range tracedPods {
		root := sink.find("Pod start", p)[0]
		if got := root.ParentSpanID(); got != pcommon.SpanID(traced.WithSpanID(trace.SpanID{0x0b, 2}).SpanID()) {
			t.Errorf("%s: Pod start parent %s, want the ReplicaSet's span", p, got)
		}
	}
	if n := sink.inTrace(pcommon.TraceID(quiet.TraceID())); n != 0 {
		t.Errorf("%d spans in the unsampled rollout's trace", n)
	}
	for _, p := range quietPods {
		if n := len(sink.find("Pod start", p)) + len(sink.find("Pod.Pulled", p)); n != 0 {
			t.Errorf("%s: %d spans of an unsampled Pod", p, n)
		}
	}
	if n := len(sink.find("Deployment rollout", "quiet")); n != 0 {
		t.Errorf("%d spans of the unsampled rollout", n)
	}
}
