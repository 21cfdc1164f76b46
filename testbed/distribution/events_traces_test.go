// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness/traced"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// TestShippedEventsPodEventsInDeploymentTrace runs the built distribution with the events
// collector's shipped traces configuration (deploy/kubernetes/traces) against the local API
// server: a Deployment carrying a trace context, its ReplicaSet and a Pod, neither of which
// carries one, and the kubelet's Events about the Pod. The Events' spans are in the
// Deployment's trace (trace_context in lookup mode reads the Pod, its ReplicaSet and its
// Deployment), and the collector opened no watch beyond kube_events' (Events; kube_lifecycle's
// rollouts follow them): the Pod and its owners cost one GET each, however many Events.
func TestShippedEventsPodEventsInDeploymentTrace(t *testing.T) {
	bin := binary(t)
	const ns = "shop"
	a := startAPITest(t, 3*time.Minute, ns)
	cluster, kc, ctx, check := a.cluster, a.kc, a.ctx, a.check
	labels := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}
	d, err := kc.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Annotations: map[string]string{"trace.kubernetes.io/context": deploymentContext}},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
	}, metav1.CreateOptions{})
	check(err)
	yes := true
	rs, err := kc.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: ns, OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: d.UID, Controller: &yes}}},
		Spec:       appsv1.ReplicaSetSpec{Selector: d.Spec.Selector, Template: tmpl},
	}, metav1.CreateOptions{})
	check(err)
	pod, err := kc.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1-a", Namespace: ns, Labels: labels, OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: rs.UID, Controller: &yes}}},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: tmpl.Spec.Containers},
	}, metav1.CreateOptions{})
	check(err)

	cw := localcloudwatch.New(localcloudwatch.Config{})
	endpoint, err := cw.Start("127.0.0.1:0")
	check(err)
	t.Cleanup(func() { _ = cw.Close() })
	xr, xrayBase := startXRay(t)
	health := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	shipped, err := harness.LoadShippedEventsConfig("../../"+harness.ShippedTracesEventsConfigMap, harness.EventsLocal{
		Kubeconfig: cluster.Kubeconfig, Endpoint: endpoint, TracesEndpoint: xrayBase + "/v1/traces", HealthAddr: health,
		Env: map[string]string{
			"POD_NAME": "events-0", "CLUSTER_NAME": "test", "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": xrayKey, "AWS_SECRET_ACCESS_KEY": xraySecret, "AWS_EC2_METADATA_DISABLED": "true",
		},
	})
	check(err)
	cfg := filepath.Join(t.TempDir(), "events.yaml")
	check(os.WriteFile(cfg, shipped.YAML, 0o600))
	before := apiRequests(t, cluster)
	watchesBefore := longRunning(t, cluster)
	stop := runCollector(t, bin, cfg, shipped.Env, health)
	// kube_events reports what happens once it holds the Lease and has its checkpoint.
	deadline := time.Now().Add(60 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := kc.CoreV1().ConfigMaps("default").Get(ctx, "otelcol-k8s-events-checkpoint", metav1.GetOptions{}); err == nil {
			break
		}
	}

	reasons := []string{"Scheduled", "Pulling", "Pulled", "Created", "Started"}
	for _, reason := range reasons {
		_, err = kc.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name + "." + strings.ToLower(reason), Namespace: ns},
			EventTime:  metav1.NewMicroTime(time.Now()), ReportingController: "kubelet", ReportingInstance: "node-1",
			Action: reason, Reason: reason, Type: "Normal", Note: reason,
			Regarding: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: pod.Name, UID: pod.UID},
		}, metav1.CreateOptions{})
		check(err)
	}
	// Wait for a span of each reason: the API server may write an Event of its own meanwhile
	// (kubecluster.FromAPIServer), so the number of spans does not tell.
	got := map[string]string{} // reason -> trace id
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && !allReasons(got, reasons); time.Sleep(100 * time.Millisecond) {
		var batches []ptrace.Traces
		for _, b := range xr.Batches() {
			batches = append(batches, b.Traces)
		}
		for _, s := range traced.AllSpans(batches...) {
			if r, ok := s.Attributes().Get(attr.EventReason); ok {
				got[r.Str()] = s.TraceID().String()
			}
		}
	}
	for _, reason := range reasons {
		if got[reason] != deploymentTraceID {
			t.Errorf("the %s Event's span is in trace %q, want the Deployment's %s (spans: %v)", reason, got[reason], deploymentTraceID, got)
		}
	}
	watches := diff(longRunning(t, cluster), watchesBefore)
	stop()
	requests := diff(apiRequests(t, cluster), before)
	t.Logf("watches %v; requests %v", watches, requests)
	if watches["pods"] != 0 {
		t.Errorf("a watch of Pods (%d): lookup mode opens none", watches["pods"])
	}
	for _, r := range []string{"deployments", "replicasets"} {
		if watches[r] != 0 || requests["LIST "+r] != 0 {
			t.Errorf("%s: %d watches, %d lists: kube_lifecycle's rollouts follow the Events kube_events watches", r, watches[r], requests["LIST "+r])
		}
	}
	for _, r := range []string{"GET pods", "GET replicasets", "GET deployments"} {
		if requests[r] != 1 {
			t.Errorf("%s: %d, want 1 (the Event's Pod and its owners once each, for %d Events)", r, requests[r], len(reasons))
		}
	}
}

// allReasons reports whether got has a span of every reason.
func allReasons(got map[string]string, reasons []string) bool {
	for _, r := range reasons {
		if _, ok := got[r]; !ok {
			return false
		}
	}
	return true
}
