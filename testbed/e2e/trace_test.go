// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness/traced"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localxray"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

// TestTraceCorrelation: Pods with trace contexts (the seed's key as traceparent and as the
// webhook's binary form, the async key) and one without are created in the local API server
// on node-1, as the ReplicaSet controller would (the Deployment's trace, propagated); the
// collector runs the shipped DaemonSet configuration with trace_context, object_ref's
// correlation and kube_lifecycle's traces pipeline (otlp_http + aws_sigv4_auth) pointed at the
// local API server and the SigV4-verifying X-Ray endpoint; the node writes the Pods' logs, whose
// klog lines name the Pods, while a kubelet writes their conditions. Every line naming a Pod
// whose context is a parent arrives in the local CloudWatch with its trace id, every other line
// a traced Pod writes with that Pod's (own_pod), and no other line has one (a link context
// correlates no line); exactly one
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
	client := harness.KubeClient(t, cluster.Kubeconfig, 0, 0)
	ctx := context.Background()
	const ns = "traced" // not a namespace the node's other pods name
	pods := traced.Pods()
	named, err := traced.Create(ctx, client, ns, "node-1", pods)
	if err != nil {
		t.Fatal(err)
	}

	n := nodesim.Config{
		Seed: 13, Pods: 3, Named: named,
		Phases: []nodesim.Phase{{Duration: 6 * time.Second, LinesPerSecond: 300}},
		Mix:    nodesim.Mix{KlogText: 2, KlogJSON: 1, Plain: 1},
	}
	// The kubelet makes the Pods ready while they log.
	var readyAt time.Time
	kubelet := func(ctx context.Context, _ *env) {
		var kerr error
		if readyAt, kerr = traced.MarkReady(ctx, client, pods); kerr != nil {
			t.Error(kerr)
		}
	}
	started := time.Now()
	run(t, e, scenario{node: n, during: kubelet})

	// Logs: every line naming a traced Pod carries its trace id, no other line has one.
	written := map[string]int{} // lines naming each Pod, from the node's files
	for _, p := range pods {
		written[p.Name] = linesNaming(t, filepath.Join(e.sim.PodsDir(), ns+"_"+p.Name+"_"+string(p.Pod.UID), "app", "0.log"), ns, p.Name)
	}
	correlated, stored := map[string]int{}, map[string]int{}
	for _, r := range traced.StoredRecords(e.srv) {
		// The line's trace: the named Pod's parent context, else (object_ref's own_pod) the
		// parent context of the Pod that wrote it; a link context is neither.
		var named, writer string
		for _, p := range pods {
			if r.Kind == "Pod" && r.Namespace == ns && p.Name == r.Name {
				named = p.TraceID
			}
			if strings.Contains(r.Stream, "/%pod/"+ns+"_"+p.Name+"_"+string(p.Pod.UID)+"_") {
				writer = p.TraceID
			}
		}
		if r.Kind == "Pod" && r.Namespace == ns {
			stored[r.Name]++
		}
		want := named
		if want == "" {
			want = writer
		}
		if r.TraceID != want {
			t.Errorf("%s/%s: trace_id %q, want %q: %s", r.Group, r.Stream, r.TraceID, want, r.Message)
		} else if named != "" {
			correlated[r.Name]++
		}
	}
	for _, p := range pods {
		wantCorrelated := written[p.Name]
		if p.TraceID == "" {
			wantCorrelated = 0
		}
		if written[p.Name] == 0 || stored[p.Name] != written[p.Name] || correlated[p.Name] != wantCorrelated {
			t.Errorf("%s: %d lines name it, %d stored naming it, %d with its trace id (want %d)", p.Name, written[p.Name], stored[p.Name], correlated[p.Name], wantCorrelated)
		}
	}

	// Spans: one lifecycle trace per Pod, signed, nothing else.
	st := xray.Stats()
	var batches []ptrace.Traces
	for _, b := range xray.Batches() {
		if b.AccessKey != "local" {
			t.Errorf("a batch signed by %q", b.AccessKey)
		}
		batches = append(batches, b.Traces)
	}
	all := traced.AllSpans(batches...)
	var roots []ptrace.Span
	for _, s := range all {
		if s.Name() == "Pod start" {
			roots = append(roots, s)
		}
	}
	spans := len(all)
	if len(st.Errors) > 0 || spans != 5*len(pods) || len(roots) != len(pods) {
		t.Fatalf("X-Ray endpoint: %d spans, %d lifecycle roots (want %d and %d); errors %v", spans, len(roots), 5*len(pods), len(pods), st.Errors)
	}
	for _, p := range pods {
		var root ptrace.Span
		found := 0
		for _, r := range roots {
			if v, _ := r.Attributes().Get("otelcol_k8s.object.name"); v.Str() == p.Name {
				root, found = r, found+1
			}
		}
		if found != 1 {
			t.Errorf("%s: %d lifecycle traces", p.Name, found)
			continue
		}
		// a trace of its own: ids from sha256("<uid>/<generation>/root") (kube_lifecycle's design.md)
		sum := sha256.Sum256([]byte(string(p.Pod.UID) + "/" + strconv.FormatInt(p.Pod.Generation, 10) + "/root"))
		wantTrace, wantParent, wantLink := hex.EncodeToString(sum[:16]), "", p.LinkSpanID
		if p.ParentSpanID != "" {
			wantTrace, wantParent = p.TraceID, p.ParentSpanID
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
			t.Errorf("%s: trace %s span %s parent %q link %q; want trace %s span %x parent %q link %q", p.Name,
				root.TraceID(), root.SpanID(), gotParent, gotLink, wantTrace, sum[16:24], wantParent, wantLink)
		}
		if !root.StartTimestamp().AsTime().Equal(p.Pod.CreationTimestamp.Time) || !root.EndTimestamp().AsTime().Equal(readyAt) {
			t.Errorf("%s: %s .. %s, want creation %s .. ready %s", p.Name, root.StartTimestamp().AsTime(), root.EndTimestamp().AsTime(), p.Pod.CreationTimestamp.Time, readyAt)
		}
	}
	t.Logf("%d lines named the traced Pods (%v), correlated %v; %d spans in %d signed requests to the X-Ray endpoint; %s",
		sumCounts(written), written, correlated, spans, st.Accepted, time.Since(started).Round(time.Millisecond))
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

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
