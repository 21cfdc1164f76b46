// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness/traced"
)

// deploymentContext is the traced Deployment's context (the seed's key, traceparent text).
const (
	deploymentTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	deploymentContext = "00-" + deploymentTraceID + "-00f067aa0ba902b7-01"
)

// tracingRun is what one run of the shipped node configuration cost the API server and gave.
type tracingRun struct {
	// requests are the API server's requests during the run, by "VERB resource", for the
	// resources the node agent reads.
	requests map[string]int64
	// watches are the watches the API server served while the collector ran, by resource.
	watches map[string]int64
	spans   []ptrace.Span
	records []fullRecord
}

// TestShippedNodeTracingAPIRequests runs the shipped node configuration with tracing off
// (deploy/kubernetes) and on (deploy/kubernetes/traces) against a real API server holding the
// same objects: a Deployment carrying a trace context with its ReplicaSet and three Pods on
// node-1, a DaemonSet (no context) with two Pods on node-1, a bare Pod, and Pods of another
// node. It counts the API server's requests (apiserver_request_total by verb and resource, after
// the collector stopped, so that its watches are counted) and the watches it served while the
// collector ran (apiserver_longrunning_requests), and checks issue 35's rule: tracing adds no
// watch and no list, only owner GETs, one per owner and none of an owner pod_metadata reads
// anyway (the Deployment and the DaemonSet; the DaemonSet although it carries no context, and
// once however often its Pods change; the ReplicaSet, which pod_metadata reads with tracing off
// too, not at all). With tracing on, each node-1 Pod has its lifecycle trace, the Deployment's Pods'
// in the Deployment's trace, and the lines those Pods write carry the Deployment's trace id.
func TestShippedNodeTracingAPIRequests(t *testing.T) {
	bin := binary(t)
	runs := map[bool]*tracingRun{}
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("traces=%v", on), func(t *testing.T) { runs[on] = runTracing(t, bin, on) })
	}
	off, on := runs[false], runs[true]
	if off == nil || on == nil {
		t.FailNow()
	}
	keys := map[string]bool{}
	for k := range off.requests {
		keys[k] = true
	}
	for k := range on.requests {
		keys[k] = true
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-22s %5s %5s\n", "request", "off", "on")
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&table, "%-22s %5d %5d\n", k, off.requests[k], on.requests[k])
	}
	t.Logf("API requests of the node agent, tracing off and on:\n%s", table.String())

	for _, run := range []*tracingRun{off, on} {
		if run.watches["pods"] != 1 || len(run.watches) != 1 {
			t.Errorf("watches while running %v: want exactly one, of pods", run.watches)
		}
	}
	// Everything but the owner GETs is the same; those are one per owner. The ReplicaSet is
	// read by pod_metadata (for k8s.deployment.name) with tracing off too, and trace_context
	// takes it from there: no second GET.
	wantExtra := map[string]int64{"GET deployments": 1, "GET daemonsets": 1}
	for k := range keys {
		if k == "GET namespaces" {
			continue // the API server's own controllers read namespaces too: not ours alone
		}
		if d := on.requests[k] - off.requests[k]; d != wantExtra[k] {
			t.Errorf("%s: tracing on made %d, off %d: want %d more", k, on.requests[k], off.requests[k], wantExtra[k])
		}
	}

	// Tracing on: a lifecycle trace per node-1 Pod; the Deployment's Pods' in its trace.
	roots := map[string]string{} // Pod name -> trace id
	for _, s := range on.spans {
		if s.Name() != "Pod start" {
			continue
		}
		if v, ok := s.Attributes().Get(attr.Subject.Name); ok {
			roots[v.Str()] = s.TraceID().String()
		}
	}
	for _, pod := range []string{"web-1-a", "web-1-b", "web-1-c"} {
		if roots[pod] != deploymentTraceID {
			t.Errorf("%s's lifecycle trace %q, want the Deployment's %s (roots %v)", pod, roots[pod], deploymentTraceID, roots)
		}
	}
	for _, pod := range []string{"agent-a", "agent-b", "bare"} {
		if id, ok := roots[pod]; !ok || id == deploymentTraceID {
			t.Errorf("%s's lifecycle trace %q: want one of its own (roots %v)", pod, id, roots)
		}
	}
	// The Pods' own lines carry their traced owner's trace id, only with tracing on.
	for withTraces, run := range runs {
		for _, r := range run.records {
			web := strings.HasPrefix(r.Body, "web")
			want := ""
			if withTraces && web {
				want = deploymentTraceID
			}
			if r.TraceID != want {
				t.Errorf("traces=%v: %q has trace id %q, want %q", withTraces, r.Body, r.TraceID, want)
			}
		}
	}
}

// runTracing runs the shipped node configuration (withTraces: the traces set) against a new API
// server and returns what it cost and gave.
func runTracing(t *testing.T, bin string, withTraces bool) *tracingRun {
	a := startAPITest(t, 3*time.Minute, "shop")
	cluster, kc, ctx, must := a.cluster, a.kc, a.ctx, a.must
	yes := true
	owner := func(kind, name string, uid k8stypes.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &yes}}
	}
	sel := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}
	deploy, err := kc.AppsV1().Deployments("shop").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Annotations: map[string]string{"trace.kubernetes.io/context": deploymentContext}},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := kc.AppsV1().ReplicaSets("shop").Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", OwnerReferences: owner("Deployment", "web", deploy.UID)},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := kc.AppsV1().DaemonSets("shop").Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "shop"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now().UTC().Truncate(time.Second)
	uids := map[string]k8stypes.UID{}
	createPod := func(name, node string, owners []metav1.OwnerReference) {
		t.Helper()
		spec := tmpl.Spec
		spec.NodeName = node
		p, err := kc.CoreV1().Pods("shop").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: sel, OwnerReferences: owners}, Spec: spec,
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Scheduled, as the scheduler leaves it; the Pods start once the collector runs (a Pod
		// Ready before the collector started was traced by the one before it, kube_lifecycle
		// design.md rule 6).
		at := metav1.NewTime(created.Add(time.Second))
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
		}}
		if _, err := kc.CoreV1().Pods("shop").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		uids[name] = p.UID
	}
	// startPods writes the node's Pods Started and Ready, as the kubelet would.
	startPods := func() {
		t.Helper()
		at := metav1.NewTime(time.Now().UTC().Truncate(time.Second).Add(time.Second))
		pods, err := kc.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: p.Status.Conditions[0].LastTransitionTime},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
			}, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}}}}
			if _, err := kc.CoreV1().Pods("shop").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range []string{"web-1-a", "web-1-b", "web-1-c"} {
		createPod(n, "node-1", owner("ReplicaSet", rs.Name, rs.UID))
	}
	for _, n := range []string{"agent-a", "agent-b"} {
		createPod(n, "node-1", owner("DaemonSet", ds.Name, ds.UID))
	}
	createPod("bare", "node-1", nil)
	createPod("web-1-elsewhere", "node-2", owner("ReplicaSet", rs.Name, rs.UID))
	createPod("agent-elsewhere", "node-2", owner("DaemonSet", ds.Name, ds.UID))

	xr, xrayBase := startXRay(t)
	configMap := harness.ShippedNodeConfigMap
	if withTraces {
		configMap = harness.ShippedTracesNodeConfigMap
	}
	root, state := t.TempDir(), t.TempDir()
	out := filepath.Join(t.TempDir(), "records.jsonl")
	health := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg, env := shippedNodeConfigFrom(t, configMap, out, harness.Local{
		NodeRoot: root, StateDir: state, Endpoint: "http://127.0.0.1:1", HealthAddr: health, Kubeconfig: cluster.Kubeconfig,
		TracesEndpoint: xrayBase,
		Env: map[string]string{
			"AWS_REGION": "us-east-1", "K8S_NODE_NAME": "node-1", "CLUSTER_NAME": "test",
			"AWS_ACCESS_KEY_ID": xrayKey, "AWS_SECRET_ACCESS_KEY": xraySecret, "AWS_EC2_METADATA_DISABLED": "true",
		},
	})
	before := apiRequests(t, cluster)
	watchesBefore := longRunning(t, cluster)
	stop := runCollector(t, bin, cfg, env, health)
	startPods()

	// The node's Pods write their first lines; the DaemonSet's Pods change meanwhile (a label,
	// as any update would): the DaemonSet is not fetched again.
	for _, pod := range []string{"web-1-a", "agent-a", "bare"} {
		dir := filepath.Join(root, "var/log/pods", "shop_"+pod+"_"+string(uids[pod]), "app")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%s stdout F %s says hello\n", time.Now().UTC().Format(time.RFC3339Nano), pod)
		if err := os.WriteFile(filepath.Join(dir, "0.log"), []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, pod := range []string{"agent-a", "agent-b"} {
		p, err := kc.CoreV1().Pods("shop").Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Labels["rev"] = "2"
		must(kc.CoreV1().Pods("shop").Update(ctx, p, metav1.UpdateOptions{}))
	}
	run := &tracingRun{}
	deadline := time.Now().Add(60 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		run.records = readFullRecords(t, out)
		var spans []ptrace.Traces
		for _, b := range xr.Batches() {
			spans = append(spans, b.Traces)
		}
		run.spans = traced.AllSpans(spans...)
		if len(run.records) >= 3 && (!withTraces || rootSpans(run.spans) >= 6) {
			break
		}
	}
	if len(run.records) != 3 || withTraces && rootSpans(run.spans) != 6 {
		t.Fatalf("got %d records (want 3) and %d lifecycle traces (want 6 with tracing on)", len(run.records), rootSpans(run.spans))
	}
	run.watches = diff(longRunning(t, cluster), watchesBefore)
	stop()
	run.requests = diff(apiRequests(t, cluster), before)
	return run
}

// runCollector is startCollector with a stop function: it interrupts the collector and waits
// for it to exit (its requests ended), and is also called when the test ends.
func runCollector(t *testing.T, bin, cfg string, env []string, health string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, bin, "--config", cfg)
	cmd.Env = append(os.Environ(), env...)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		cancel()
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("collector output:\n%s", logs.String())
		}
	})
	waitHealthy(t, health)
	return stop
}

// rootSpans counts the lifecycle traces' root spans.
func rootSpans(spans []ptrace.Span) int {
	n := 0
	for _, s := range spans {
		if s.Name() == "Pod start" {
			n++
		}
	}
	return n
}

// readResources are the resources the node agent reads.
var readResources = []string{"pods", "namespaces", "replicasets", "deployments", "daemonsets", "statefulsets", "jobs", "cronjobs"}

// apiRequests returns the API server's apiserver_request_total by "VERB resource" for
// readResources, without subresources (the test's own status writes).
func apiRequests(t *testing.T, c *kubecluster.Cluster) map[string]int64 {
	t.Helper()
	return scrape(t, c, "apiserver_request_total{", func(labels map[string]string) (string, bool) {
		if labels["subresource"] != "" || !slices.Contains(readResources, labels["resource"]) {
			return "", false
		}
		return labels["verb"] + " " + labels["resource"], true
	})
}

// longRunning returns the watches the API server is serving, by resource.
func longRunning(t *testing.T, c *kubecluster.Cluster) map[string]int64 {
	t.Helper()
	return scrape(t, c, "apiserver_longrunning_requests{", func(labels map[string]string) (string, bool) {
		return labels["resource"], labels["verb"] == "WATCH" && slices.Contains(readResources, labels["resource"])
	})
}

// scrape sums the samples of the API server's /metrics lines starting with prefix, by the key
// key gives them.
func scrape(t *testing.T, c *kubecluster.Cluster, prefix string, key func(map[string]string) (string, bool)) map[string]int64 {
	t.Helper()
	hc, err := c.HTTPClient(true)
	if err != nil {
		t.Fatal(err)
	}
	return scrapeURL(t, hc, c.Host+"/metrics", prefix, key)
}

// scrapeURL sums the samples of the Prometheus text at url (an API server's or a collector's
// /metrics) on lines starting with prefix, by the key key gives them.
func scrapeURL(t *testing.T, hc *http.Client, url, prefix string, key func(map[string]string) (string, bool)) map[string]int64 {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }() // read-only
	out := map[string]int64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		labels := map[string]string{}
		if end < 0 { // a sample without labels: "name value"
			end = strings.IndexByte(line, ' ')
			if end < 0 || end != len(prefix) {
				continue // another metric whose name starts with prefix
			}
		} else {
			for _, kv := range strings.Split(line[len(prefix):end], ",") {
				k, v, _ := strings.Cut(kv, "=")
				labels[k] = strings.Trim(v, `"`)
			}
		}
		k, ok := key(labels)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			t.Fatal(err)
		}
		out[k] += int64(v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// diff returns after - before, without zeros.
func diff(after, before map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}
