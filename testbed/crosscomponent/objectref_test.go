// SPDX-License-Identifier: Apache-2.0

package crosscomponent

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
	"github.com/otelcol-k8s/otelcol-k8s/processor/objectrefprocessor"
)

// The cluster the object_ref tests and benchmarks hold: Pod i is "web-<j>-7d4b9c8f6-<i>" owned
// by ReplicaSet j = i%replicaSets; every tenth Pod (i%10 == 0) and every tenth ReplicaSet
// (j%10 == 5) carry a context; Pods whose number is a multiple of nodeStride run on node-1
// (110 of 10,000: the kubelet's default max-pods), the others on node-2.
const (
	replicaSets = 100
	nodeStride  = 91
)

// traceIDOf is the trace id of the context of ReplicaSet i, or of Pod i-replicaSets.
func traceIDOf(i int) trace.TraceID { return trace.TraceID{byte(i), byte(i >> 8), 1} }

func contextOf(i int) map[string]string {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: traceIDOf(i), SpanID: trace.SpanID{byte(i), byte(i >> 8), 2}, TraceFlags: trace.FlagsSampled,
	})
	return map[string]string{objecttrace.ContextAnnotation: objecttrace.FormatTraceparent(sc)}
}

func replicaSetName(j int) string { return fmt.Sprintf("web-%d-7d4b9c8f6", j) }
func podName(i int) string        { return fmt.Sprintf("%s-%05d", replicaSetName(i%replicaSets), i) }

// createObjects creates, in ns, the Pods numbered pods and their ReplicaSets, with the contexts
// above when withContexts.
func createObjects(tb testing.TB, client kubernetes.Interface, ns string, pods []int, withContexts bool) {
	tb.Helper()
	ensureNamespace(tb, client, ns)
	ctx := context.Background()
	uids := map[int]string{}
	for _, i := range pods {
		j := i % replicaSets
		if _, done := uids[j]; done {
			continue
		}
		labels := map[string]string{"app": "web", "pod-template-hash": "7d4b9c8f6", "rs": strconv.Itoa(j)}
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: replicaSetName(j), Namespace: ns},
			Spec: appsv1.ReplicaSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
				},
			},
		}
		if withContexts && j%10 == 5 {
			rs.Annotations = contextOf(j)
		}
		created, err := client.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{})
		require.NoError(tb, err)
		uids[j] = string(created.UID)
	}
	work := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if err := createPod(ctx, client, ns, i, uids[i%replicaSets], withContexts); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for _, i := range pods {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		tb.Fatal(err)
	default:
	}
}

func createPod(ctx context.Context, client kubernetes.Interface, ns string, i int, ownerUID string, withContexts bool) error {
	yes := true
	node := "node-2"
	if i%nodeStride == 0 {
		node = "node-1"
	}
	j := i % replicaSets
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: podName(i), Namespace: ns,
			Labels: map[string]string{"app": "web", "pod-template-hash": "7d4b9c8f6", "rs": strconv.Itoa(j)},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: replicaSetName(j), UID: types.UID(ownerUID), Controller: &yes,
			}},
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
	if withContexts && i%10 == 0 {
		p.Annotations = contextOf(replicaSets + i)
	}
	_, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	return err
}

// recordsNaming are 1,000 kube-scheduler records naming the Pods numbered pods of ns in turn,
// and a Node.
func recordsNaming(ns string, pods []int) plog.Logs {
	logs := plog.NewLogs()
	lrs := logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i := range 1000 {
		_ = lrs.AppendEmpty().Attributes().FromRaw(map[string]any{
			"pod":              ns + "/" + podName(pods[i%len(pods)]),
			"node":             "node-12",
			"evaluatedNodes":   int64(6),
			"code.file.path":   "schedule_one.go",
			"code.line.number": int64(252),
		})
	}
	return logs
}

// newObjectRef starts an object_ref processor matching every record, asking the extension ext
// of h (none when nil), into next.
func newObjectRef(tb testing.TB, h host, ext *component.ID, next consumer.Logs) processor.Logs {
	tb.Helper()
	f := objectrefprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*objectrefprocessor.Config)
	cfg.Match.All = true
	cfg.TraceContext = ext
	p, err := f.CreateLogs(context.Background(), processortest.NewNopSettings(f.Type()), cfg, next)
	require.NoError(tb, err)
	require.NoError(tb, p.Start(context.Background(), h))
	tb.Cleanup(func() { require.NoError(tb, p.Shutdown(context.Background())) })
	return p
}

// TestObjectRefAsksTraceContext: object_ref gives a record the trace id of the Pod it names,
// from trace_context watching a real API server: the Pod's own context, or its ReplicaSet's
// through the owner walk, or none. In node scope (the DaemonSet's) only the node's Pods answer,
// their ReplicaSets fetched on demand.
func TestObjectRefAsksTraceContext(t *testing.T) {
	cluster, client := apiServer(t)
	const ns = "shop"
	// 0, 455 and 910 run on node-1; 455's ReplicaSet (55) carries a context.
	createObjects(t, client, ns, []int{10, 11, 1015, 9990, 0, 91, 455, 910}, true)
	for _, tc := range []struct {
		scope string
		node  string
		want  map[int]trace.TraceID // by Pod; absent: no context
	}{
		{"cluster", "", map[int]trace.TraceID{
			10: traceIDOf(replicaSets + 10), 1015: traceIDOf(15), 9990: traceIDOf(replicaSets + 9990),
			0: traceIDOf(replicaSets), 455: traceIDOf(55), 910: traceIDOf(replicaSets + 910),
		}},
		{"node", "node-1", map[int]trace.TraceID{
			0: traceIDOf(replicaSets), 455: traceIDOf(55), 910: traceIDOf(replicaSets + 910),
		}},
	} {
		t.Run(tc.scope, func(t *testing.T) {
			ext := startTraceContext(t, cluster.Kubeconfig, tc.node)
			sink := &consumertest.LogsSink{}
			p := newObjectRef(t, host{traceContextID: ext}, &traceContextID, sink)
			pods := []int{10, 11, 1015, 9990, 0, 91, 455, 910}
			// In node scope the owners are fetched after the first record naming their Pods.
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				sink.Reset()
				require.NoError(c, p.ConsumeLogs(context.Background(), recordsNaming(ns, pods)))
				got := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
				for k, i := range pods {
					assert.Equal(c, tc.want[i], trace.TraceID(got.At(k).TraceID()), "Pod %d", i)
				}
			}, 30*time.Second, 50*time.Millisecond)
		})
	}
}

// benchPods is how many Pods the benchmark's cluster holds (OTELCOL_K8S_BENCH_PODS, default
// 10,000: created once per run through the API server, about a minute).
func benchPods(tb testing.TB) int {
	n := 10_000
	if v := os.Getenv("OTELCOL_K8S_BENCH_PODS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < nodeStride {
			tb.Fatalf("OTELCOL_K8S_BENCH_PODS=%q: a number of at least %d", v, nodeStride)
		}
	}
	return n
}

// BenchmarkObjectRefRatio runs object_ref alone and object_ref asking trace_context side by
// side: one batch of the same 1,000 records each in turn (which goes first alternates), so that
// the load of a shared machine falls on both alike. It reports the median ns per record of each
// and their ratio (with/alone), from wall time and from the benchmark thread's CPU time (cpu_*:
// time spent descheduled on a busy machine does not inflate it).
//
// The extension watches a real API server holding benchPods Pods of 100 ReplicaSets. "10pct":
// 10% of Pods and of ReplicaSets carry a context (19% of the records' Pods resolve);
// "10pct_hits" and "10pct_misses" split its records into those naming a Pod that resolves and
// those naming one that does not; "no_contexts" names the same objects in a namespace where
// none carries a context; "answers_nothing" asks a source that answers every look-up "no" at
// once: the floor the look-up interface itself sets. "node" is the extension as the DaemonSet
// runs it (node_name): the 110 Pods of node-1, 20% of which resolve, and their ReplicaSets.
func BenchmarkObjectRefRatio(b *testing.B) {
	cluster, client := apiServer(b)
	n := benchPods(b)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	createObjects(b, client, "default", all, true)
	createObjects(b, client, "bare", all, false)

	var spread, hits, misses, node []int
	for k := range 1000 {
		spread = append(spread, (k*7)%n)
	}
	for i := 0; i < n; i += 7 {
		if i%10 == 0 || (i%replicaSets)%10 == 5 {
			hits = append(hits, i)
		} else {
			misses = append(misses, i)
		}
	}
	nodeCount := (n + nodeStride - 1) / nodeStride
	for k := range nodeCount {
		node = append(node, (k*7%nodeCount)*nodeStride)
	}
	for _, tc := range []struct {
		name    string
		node    string
		records plog.Logs
		silent  bool
	}{
		{"10pct", "", recordsNaming("default", spread), false},
		{"10pct_hits", "", recordsNaming("default", hits), false},
		{"10pct_misses", "", recordsNaming("default", misses), false},
		{"no_contexts", "", recordsNaming("bare", spread), false},
		{"answers_nothing", "", recordsNaming("default", spread), true},
		{"node", "node-1", recordsNaming("default", node), false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var src component.Component = silentSource{}
			if !tc.silent {
				src = startTraceContext(b, cluster.Kubeconfig, tc.node)
				if tc.node != "" {
					warmOwners(b, src, tc.records)
				}
			}
			sideBySide(b, src, tc.records)
		})
	}
}

// warmOwners runs the records through object_ref asking src until a run's trace ids repeat the
// previous run's: in node scope the extension fetches a Pod's owner after the first look-up.
func warmOwners(b *testing.B, src component.Component, records plog.Logs) {
	sink := &consumertest.LogsSink{}
	p := newObjectRef(b, host{traceContextID: src}, &traceContextID, sink)
	correlated := func() int {
		sink.Reset()
		batch := plog.NewLogs()
		records.CopyTo(batch)
		require.NoError(b, p.ConsumeLogs(context.Background(), batch))
		n := 0
		lrs := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for i := range lrs.Len() {
			if !lrs.At(i).TraceID().IsEmpty() {
				n++
			}
		}
		return n
	}
	prev := -1
	require.Eventually(b, func() bool {
		n := correlated()
		settled := n > 0 && n == prev
		prev = n
		return settled
	}, 30*time.Second, 200*time.Millisecond)
}

// silentSource is a trace context source that knows no object: every look-up answers "no".
type silentSource struct {
	component.StartFunc
	component.ShutdownFunc
}

func (silentSource) SpanContextForObject(context.Context, string, string, string, string, string) (trace.SpanContext, bool, bool) {
	return trace.SpanContext{}, false, false
}

// sideBySide runs the records of templ through object_ref alone and asking src, batch by batch
// in turn, and reports the metrics of BenchmarkObjectRefRatio. Each batch runs under the pprof
// label side=alone or side=with, so that a CPU profile (-cpuprofile) of the benchmark splits
// into the two configurations (go tool pprof -tagfocus side=with).
func sideBySide(b *testing.B, src component.Component, templ plog.Logs) {
	h := host{traceContextID: src}
	procs := []processor.Logs{
		newObjectRef(b, h, nil, consumertest.NewNop()),
		newObjectRef(b, h, &traceContextID, consumertest.NewNop()),
	}
	perBatch := templ.LogRecordCount()
	var wall, cpu [2][]time.Duration
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for n := 0; n < b.N; n += perBatch {
		for k := range procs {
			i := k
			if (n/perBatch)%2 == 1 {
				i = 1 - k
			}
			batch := plog.NewLogs()
			templ.CopyTo(batch)
			startCPU, start := threadCPU(b), time.Now()
			var err error
			pprof.Do(context.Background(), pprof.Labels("side", []string{"alone", "with"}[i]), func(ctx context.Context) {
				err = procs[i].ConsumeLogs(ctx, batch)
			})
			if err != nil {
				b.Fatal(err)
			}
			wall[i] = append(wall[i], time.Since(start))
			cpu[i] = append(cpu[i], threadCPU(b)-startCPU)
		}
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(perBatch)
	}
	alone, with := median(wall[0]), median(wall[1])
	b.ReportMetric(alone, "ns/record_alone")
	b.ReportMetric(with, "ns/record_with")
	b.ReportMetric(with/alone, "ratio")
	alone, with = median(cpu[0]), median(cpu[1])
	b.ReportMetric(alone, "cpu_ns/record_alone")
	b.ReportMetric(with, "cpu_ns/record_with")
	b.ReportMetric(with/alone, "cpu_ratio")
}
