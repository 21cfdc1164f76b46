// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localxray"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

// The trace context annotations, written here by hand as a controller or the original admission
// webhook would (not through the product's library).
const (
	seedKey  = "trace.kubernetes.io/context"
	asyncKey = "tracing.k8s.io/traceparent"
)

// tracedPod is a Pod the scenario creates in the API server and the node writes logs for.
type tracedPod struct {
	name, key, value string
	format           nodesim.Format
	traceID          string // the trace id its log lines must carry; empty: none
	parentSpanID     string // the span its lifecycle root is a child of; empty: a trace of its own
	linkSpanID       string // the span its lifecycle root links to
	pod              *corev1.Pod
}

// binaryContext is the original webhook's base64 span context: version 0, field 0 trace id,
// field 1 span id, field 2 options.
func binaryContext(traceID, spanID string) string {
	t, _ := hex.DecodeString(traceID)
	s, _ := hex.DecodeString(spanID)
	b := append([]byte{0, 0}, t...)
	b = append(append(b, 1), s...)
	return base64.StdEncoding.EncodeToString(append(b, 2, 1))
}

// TestTraceCorrelation: Pods with trace contexts (the seed's key as traceparent and as the
// webhook's binary form, the async key) and one without are created in the local API server
// on node-1, as the ReplicaSet controller would (the Deployment's trace, propagated); the
// collector runs the shipped DaemonSet configuration with trace_context, object_ref's
// correlation and kube_lifecycle's traces pipeline (otlp_http + aws_sigv4_auth) pointed at the
// local API server and the SigV4-verifying X-Ray endpoint; the node writes the Pods' logs, whose
// klog lines name the Pods, while a kubelet writes their conditions. Every line naming a traced
// Pod arrives in the local CloudWatch with its trace id and no other line has one; exactly one
// lifecycle trace per Pod (root and four condition spans) arrives signed, under the Pod's
// context, linked to it, or in a trace of its own, ending at Ready.
func TestTraceCorrelation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 13})
	cluster := kubecluster.Start(t)
	xray := localxray.New(localxray.Config{Credentials: map[string]string{"local": "local"}})
	base, err := xray.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = xray.Close() }()
	e.kubeconfig, e.tracesEndpoint = cluster.Kubeconfig, base
	rc, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const ns = "traced" // not a namespace the node's other pods name
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The Deployment's trace; the ReplicaSet controller's create-pod spans in it.
	const deployTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	pods := []*tracedPod{
		{name: "store-a", key: seedKey, value: "00-" + deployTrace + "-00f067aa0ba90201-01", format: nodesim.FormatKlogText, traceID: deployTrace, parentSpanID: "00f067aa0ba90201"},
		{name: "store-b", key: seedKey, value: binaryContext(deployTrace, "00f067aa0ba90202"), format: nodesim.FormatKlogJSON, traceID: deployTrace, parentSpanID: "00f067aa0ba90202"},
		{name: "store-c", key: asyncKey, value: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", format: nodesim.FormatKlogText, traceID: "0af7651916cd43dd8448eb211c80319c", linkSpanID: "b7ad6b7169203331"},
		{name: "plain", format: nodesim.FormatKlogText},
	}
	var named []nodesim.PodIdentity
	for _, p := range pods {
		obj := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: ns},
			Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
		}
		if p.key != "" {
			obj.Annotations = map[string]string{p.key: p.value}
		}
		if p.pod, err = client.CoreV1().Pods(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		named = append(named, nodesim.PodIdentity{Namespace: ns, Name: p.name, UID: string(p.pod.UID), Format: p.format})
	}

	var readyAt metav1.Time
	n := nodesim.Config{
		Seed: 13, Pods: 3, Named: named,
		Phases: []nodesim.Phase{{Duration: 6 * time.Second, LinesPerSecond: 300}},
		Mix:    nodesim.Mix{KlogText: 2, KlogJSON: 1, Plain: 1},
	}
	// The kubelet: scheduled and initialized, then ready, while the Pods log.
	kubelet := func(ctx context.Context, _ *env) {
		sec := func(d int) metav1.Time { return metav1.NewTime(pods[0].pod.CreationTimestamp.Add(time.Duration(d) * time.Second)) }
		for _, p := range pods {
			p.pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: sec(1)},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: sec(2)},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: sec(3)},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: sec(3)},
			}}
			readyAt = sec(3)
			if _, err := client.CoreV1().Pods(ns).UpdateStatus(ctx, p.pod, metav1.UpdateOptions{}); err != nil {
				t.Error(err)
			}
		}
	}
	started := time.Now()
	run(t, e, scenario{node: n, during: kubelet})

	// Logs: every line naming a traced Pod carries its trace id, no other line has one.
	written := map[string]int{} // lines naming each Pod, from the node's files
	for _, p := range pods {
		written[p.name] = linesNaming(t, filepath.Join(e.sim.PodsDir(), ns+"_"+p.name+"_"+string(p.pod.UID), "app", "0.log"), ns, p.name)
	}
	correlated, named2 := map[string]int{}, map[string]int{}
	for _, g := range e.srv.Groups() {
		streams, _ := e.srv.Streams(g.Name)
		for _, st := range streams {
			evs, _ := e.srv.Events(g.Name, st.Name)
			for _, ev := range evs {
				var m struct {
					TraceID    string         `json:"trace_id"`
					Attributes map[string]any `json:"attributes"`
				}
				if err := json.Unmarshal([]byte(ev.Message), &m); err != nil {
					continue // plain application lines
				}
				kind, _ := m.Attributes["otelcol_k8s.object.kind"].(string)
				namespace, _ := m.Attributes["otelcol_k8s.object.namespace"].(string)
				name, _ := m.Attributes["otelcol_k8s.object.name"].(string)
				var want string
				if kind == "Pod" && namespace == ns {
					named2[name]++
					for _, p := range pods {
						if p.name == name {
							want = p.traceID
						}
					}
				}
				if m.TraceID != want {
					t.Errorf("%s/%s: trace_id %q, want %q: %s", g.Name, st.Name, m.TraceID, want, ev.Message)
				} else if want != "" {
					correlated[name]++
				}
			}
		}
	}
	for _, p := range pods {
		wantCorrelated := written[p.name]
		if p.traceID == "" {
			wantCorrelated = 0
		}
		if written[p.name] == 0 || named2[p.name] != written[p.name] || correlated[p.name] != wantCorrelated {
			t.Errorf("%s: %d lines name it, %d stored naming it, %d with its trace id (want %d)", p.name, written[p.name], named2[p.name], correlated[p.name], wantCorrelated)
		}
	}

	// Spans: one lifecycle trace per Pod, signed, nothing else.
	st := xray.Stats()
	var roots []ptrace.Span
	spans := 0
	for _, b := range xray.Batches() {
		if b.AccessKey != "local" {
			t.Errorf("a batch signed by %q", b.AccessKey)
		}
		rss := b.Traces.ResourceSpans()
		for i := range rss.Len() {
			for j := range rss.At(i).ScopeSpans().Len() {
				ss := rss.At(i).ScopeSpans().At(j).Spans()
				for k := range ss.Len() {
					spans++
					if ss.At(k).Name() == "Pod start" {
						roots = append(roots, ss.At(k))
					}
				}
			}
		}
	}
	if len(st.Errors) > 0 || spans != 5*len(pods) || len(roots) != len(pods) {
		t.Fatalf("X-Ray endpoint: %d spans, %d lifecycle roots (want %d and %d); errors %v", spans, len(roots), 5*len(pods), len(pods), st.Errors)
	}
	for _, p := range pods {
		var root ptrace.Span
		found := 0
		for _, r := range roots {
			if v, _ := r.Attributes().Get("otelcol_k8s.object.name"); v.Str() == p.name {
				root, found = r, found+1
			}
		}
		if found != 1 {
			t.Errorf("%s: %d lifecycle traces", p.name, found)
			continue
		}
		sum := sha256.Sum256([]byte(string(p.pod.UID) + "/" + strconv.FormatInt(p.pod.Generation, 10) + "/root"))
		wantTrace, wantParent, wantLink := hex.EncodeToString(sum[:16]), "", ""
		if p.parentSpanID != "" {
			wantTrace, wantParent = p.traceID, p.parentSpanID
		}
		if p.linkSpanID != "" {
			wantLink = p.linkSpanID
		}
		gotLink := ""
		if root.Links().Len() == 1 {
			gotLink = root.Links().At(0).SpanID().String()
		}
		gotParent := ""
		if !root.ParentSpanID().IsEmpty() {
			gotParent = root.ParentSpanID().String()
		}
		if root.TraceID().String() != wantTrace || root.SpanID().String() != hex.EncodeToString(sum[16:24]) || gotParent != wantParent || gotLink != wantLink {
			t.Errorf("%s: trace %s span %s parent %q link %q; want trace %s span %x parent %q link %q", p.name,
				root.TraceID(), root.SpanID(), gotParent, gotLink, wantTrace, sum[16:24], wantParent, wantLink)
		}
		if !root.StartTimestamp().AsTime().Equal(p.pod.CreationTimestamp.Time) || !root.EndTimestamp().AsTime().Equal(readyAt.Time) {
			t.Errorf("%s: %s .. %s, want creation %s .. ready %s", p.name, root.StartTimestamp().AsTime(), root.EndTimestamp().AsTime(), p.pod.CreationTimestamp.Time, readyAt.Time)
		}
	}
	t.Logf("%d lines named the traced Pods (%v), correlated %v; %d spans in %d signed requests to the X-Ray endpoint; %s",
		sumValues(written), written, correlated, spans, st.Accepted, time.Since(started).Round(time.Millisecond))
}

// linesNaming counts the lines of a container log file whose klog content names Pod ns/name
// (text `pod="ns/name"`, JSON `"pod":{"name":..,"namespace":..}`).
func linesNaming(t *testing.T, path, ns, name string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read-only
	text := fmt.Sprintf(`pod="%s/%s"`, ns, name)
	js := fmt.Sprintf(`"pod":{"name":%q,"namespace":%q}`, name, ns)
	object := fmt.Sprintf(`object="%s/%s"`, ns, name)
	objectJS := fmt.Sprintf(`"object":{"name":%q,"namespace":%q}`, name, ns)
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, text) || strings.Contains(l, js) || strings.Contains(l, object) || strings.Contains(l, objectJS) {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
