// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
	"github.com/otelcol-k8s/otelcol-k8s/processor/objectrefprocessor"
)

const (
	benchPods        = 10_000
	benchReplicaSets = 100
)

// benchObjects are what the Pod and ReplicaSet watches deliver for a cluster of benchPods Pods:
// every tenth Pod (i%10 == 0) and every tenth ReplicaSet (j%10 == 5) carry a context, every Pod
// is owned by ReplicaSet i%100 (so the others resolve through the owner walk, or not at all).
func benchObjects() []*metav1.PartialObjectMetadata {
	yes := true
	ctxValue := func(i int) map[string]string {
		sc := trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: benchTraceID(i), SpanID: trace.SpanID{byte(i), byte(i >> 8), 2}, TraceFlags: trace.FlagsSampled,
		})
		return map[string]string{objecttrace.ContextAnnotation: objecttrace.FormatTraceparent(sc), "deployment.kubernetes.io/revision": "3"}
	}
	out := make([]*metav1.PartialObjectMetadata, 0, benchPods+benchReplicaSets)
	for j := range benchReplicaSets {
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("web-%d-7d4b9c8f6", j), Namespace: "default", UID: k8stypes.UID(fmt.Sprintf("3f9a1c2e-0000-4000-8000-%012d", j)),
		}}
		m.APIVersion, m.Kind = "apps/v1", "ReplicaSet"
		if j%10 == 5 {
			m.Annotations = ctxValue(j)
		}
		out = append(out, m)
	}
	for i := range benchPods {
		j := i % benchReplicaSets
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("web-%d-7d4b9c8f6-%05d", j, i), Namespace: "default", UID: k8stypes.UID(fmt.Sprintf("6b1b0f4e-9c2b-4c49-9d0e-%012d", i)),
			Labels: map[string]string{"app": "web", "pod-template-hash": "7d4b9c8f6"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: fmt.Sprintf("web-%d-7d4b9c8f6", j),
				UID: k8stypes.UID(fmt.Sprintf("3f9a1c2e-0000-4000-8000-%012d", j)), Controller: &yes,
			}},
		}}
		if i%10 == 0 {
			m.Annotations = ctxValue(benchReplicaSets + i)
		}
		out = append(out, m)
	}
	return out
}

// nodeStride picks the Pods of one node out of benchObjects: those whose number is a multiple
// of it, 110 Pods (the kubelet's default max-pods), 11 of them with their own context and 11
// more whose ReplicaSet has one.
const nodeStride = 91

// nodeObjects are what the extension holds in node scope (node_name, as deploy/ ships it): the
// node's Pods from the Pod watch and the ReplicaSets fetched as their owners.
func nodeObjects() []*metav1.PartialObjectMetadata {
	all := benchObjects() // the ReplicaSets, then Pod i at benchReplicaSets+i
	out := slices.Clone(all[:benchReplicaSets])
	for i := 0; i < benchPods; i += nodeStride {
		out = append(out, all[benchReplicaSets+i])
	}
	return out
}

// nodePods are the numbers of the node's Pods, in the order records name them.
func nodePods() []int {
	n := (benchPods + nodeStride - 1) / nodeStride
	pods := make([]int, n)
	for i := range pods {
		pods[i] = (i * 7 % n) * nodeStride
	}
	return pods
}

// benchTraceID is the trace id of the context of ReplicaSet i, or of Pod i-benchReplicaSets.
func benchTraceID(i int) trace.TraceID {
	return trace.TraceID{byte(i), byte(i >> 8), 1}
}

// populate feeds objects to e through the path watch events take.
func populate(e *traceContextExtension, objs []*metav1.PartialObjectMetadata) {
	for _, m := range objs {
		r := e.kinds["/Pod"]
		if m.Kind == "ReplicaSet" {
			r = e.kinds["apps/ReplicaSet"]
		}
		e.observe(r, m, metav1.Now().Time)
	}
}

func newBenchExtension(tb testing.TB) *traceContextExtension {
	e, err := newExtension(createDefaultConfig().(*Config), componenttest.NewNopTelemetrySettings())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return e
}

// BenchmarkMemory10kPods reports the heap the extension holds for 10,000 Pods of 100
// ReplicaSets, 10% of each carrying a context (bytes/store), after the objects themselves are
// gone, as they are once the watch has delivered them.
func BenchmarkMemory10kPods(b *testing.B) {
	var held uint64
	for range b.N {
		e := newBenchExtension(b)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		populate(e, benchObjects())
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = after.HeapAlloc - before.HeapAlloc
		if e.store.len() != benchPods+benchReplicaSets/10 {
			b.Fatalf("held %d objects", e.store.len())
		}
		runtime.KeepAlive(e)
	}
	b.ReportMetric(float64(held), "bytes/store")
	b.ReportMetric(float64(held)/benchPods, "bytes/pod")
}

type benchHost map[component.ID]component.Component

func (h benchHost) GetExtensions() map[component.ID]component.Component { return h }

// BenchmarkObjectRef measures object_ref per record (ns/op is per record) alone and with this
// extension answering for the records' Pods: 10,000 Pods, 10% with their own context and the
// rest resolved through their ReplicaSet (10% of which carry one) or not at all.
func BenchmarkObjectRef(b *testing.B) {
	e := newBenchExtension(b)
	populate(e, benchObjects())
	extID := component.MustNewID("trace_context")
	host := benchHost{extID: e}

	templ := benchRecords()
	for _, tc := range []struct {
		name string
		ext  *component.ID
	}{
		{"alone", nil},
		{"with_trace_context", &extID},
	} {
		b.Run(tc.name, func(b *testing.B) {
			consumeCopies(b, newObjectRef(b, host, tc.ext, consumertest.NewNop()), templ)
		})
	}
}

// benchRecords are 1,000 kube-scheduler records, each naming one of the benchPods Pods and a
// Node.
func benchRecords() plog.Logs {
	var pods []int
	for i := range 1000 {
		pods = append(pods, (i*7)%benchPods)
	}
	return recordsNaming(pods)
}

// recordsNaming are 1,000 kube-scheduler records naming the Pods numbered pods in turn, and a
// Node.
func recordsNaming(pods []int) plog.Logs {
	templ := plog.NewLogs()
	lrs := templ.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i := range 1000 {
		j := pods[i%len(pods)]
		_ = lrs.AppendEmpty().Attributes().FromRaw(map[string]any{
			"pod":              fmt.Sprintf("default/web-%d-7d4b9c8f6-%05d", j%benchReplicaSets, j),
			"node":             "node-12",
			"evaluatedNodes":   int64(6),
			"code.file.path":   "schedule_one.go",
			"code.line.number": int64(252),
		})
	}
	return templ
}

// newObjectRef starts an object_ref processor matching every record, asking the extension ext
// (none when nil) of host, into next.
func newObjectRef(tb testing.TB, host component.Host, ext *component.ID, next consumer.Logs) processor.Logs {
	cfg := objectrefprocessor.NewFactory().CreateDefaultConfig().(*objectrefprocessor.Config)
	cfg.Match.All = true
	cfg.TraceContext = ext
	p, err := objectrefprocessor.NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(component.MustNewType("object_ref")), cfg, next)
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Start(context.Background(), host); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// consumeCopies runs b.N records through p as fresh copies of templ made outside the timer.
func consumeCopies(b *testing.B, p processor.Logs, templ plog.Logs) {
	perBatch := templ.LogRecordCount()
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += perBatch {
		b.StopTimer()
		batch := plog.NewLogs()
		templ.CopyTo(batch)
		b.StartTimer()
		if err := p.ConsumeLogs(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
}

// TestObjectRefCorrelates checks the benchmark measures what it claims: with the extension,
// records of a Pod with its own context, or whose ReplicaSet has one, get that trace id.
func TestObjectRefCorrelates(t *testing.T) {
	e := newBenchExtension(t)
	populate(e, benchObjects())
	extID := component.MustNewID("trace_context")
	sink := &consumertest.LogsSink{}
	p := newObjectRef(t, benchHost{extID: e}, &extID, sink)
	tests := []struct {
		pod       int
		wantTrace trace.TraceID // zero: not correlated
	}{
		{pod: 10, wantTrace: benchTraceID(benchReplicaSets + 10)},     // its own
		{pod: 1015, wantTrace: benchTraceID(15)},                      // its ReplicaSet's (15)
		{pod: 11},                                                     // neither
		{pod: 9990, wantTrace: benchTraceID(benchReplicaSets + 9990)}, // its own
	}
	logs := plog.NewLogs()
	lrs := logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, tt := range tests {
		_ = lrs.AppendEmpty().Attributes().FromRaw(map[string]any{"pod": fmt.Sprintf("default/web-%d-7d4b9c8f6-%05d", tt.pod%benchReplicaSets, tt.pod)})
	}
	if err := p.ConsumeLogs(context.Background(), logs); err != nil {
		t.Fatal(err)
	}
	got := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i, tt := range tests {
		if trace.TraceID(got.At(i).TraceID()) != tt.wantTrace {
			t.Errorf("pod %d: trace id %v, want %v", tt.pod, got.At(i).TraceID(), tt.wantTrace)
		}
	}
}

// BenchmarkObjectRefRatio runs object_ref alone and object_ref asking this extension side by
// side: one batch of the same 1,000 records each in turn (which goes first alternates), against
// the same extension state, so that the load of a shared machine falls on both alike. It reports
// the median ns per record of each and their ratio (with/alone), from wall time and from the
// benchmark thread's CPU time (cpu_*: time spent descheduled on a busy machine does not inflate
// it; GC assists are charged to the thread that allocates, background GC to neither).
//
// "10pct" is the extension of BenchmarkObjectRef (10% of Pods and of ReplicaSets with a
// context: 19% of the records' Pods resolve); "10pct_hits" and "10pct_misses" split its records
// into those naming a Pod that resolves and those naming one that does not; "no_contexts" holds
// the same objects without any context (every Pod still held as a link to its ReplicaSet): a
// cluster where nothing writes one, whose cost should be about 0. "answers_nothing" asks a
// source that answers every look-up "no" at once (and has no TraceContextsHeld): the floor the
// look-up interface itself sets (two calls per record, the Pod's and the Node's), whatever the
// extension does behind it. "node" is the extension as the DaemonSet in deploy/ runs it
// (node_name): the 110 Pods of its node, 20% of which resolve, and their ReplicaSets; the
// records name those Pods.
func BenchmarkObjectRefRatio(b *testing.B) {
	var hits, misses []int
	for i := 0; i < benchPods; i += 7 {
		if i%10 == 0 || (i%benchReplicaSets)%10 == 5 { // its own context, or its ReplicaSet's
			hits = append(hits, i)
		} else {
			misses = append(misses, i)
		}
	}
	var without []*metav1.PartialObjectMetadata
	for _, m := range benchObjects() {
		m.Annotations = nil
		without = append(without, m)
	}
	for _, tc := range []struct {
		name    string
		objs    []*metav1.PartialObjectMetadata
		records plog.Logs
		silent  bool // ask silentSource instead of the extension
	}{
		{"10pct", benchObjects(), benchRecords(), false},
		{"10pct_hits", benchObjects(), recordsNaming(hits), false},
		{"10pct_misses", benchObjects(), recordsNaming(misses), false},
		{"no_contexts", without, benchRecords(), false},
		{"answers_nothing", benchObjects(), benchRecords(), true},
		{"node", nodeObjects(), recordsNaming(nodePods()), false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := newBenchExtension(b)
			populate(e, tc.objs)
			var src component.Component = e
			if tc.silent {
				src = silentSource{}
			}
			sideBySide(b, src, tc.records)
		})
	}
}

// silentSource is a trace context source that knows no object: every look-up answers "no".
type silentSource struct {
	component.StartFunc
	component.ShutdownFunc
}

func (silentSource) SpanContextForObject(context.Context, string, string, string, string, string) (trace.SpanContext, bool) {
	return trace.SpanContext{}, false
}

// sideBySide runs the records of templ through object_ref alone and asking src, batch by batch
// in turn, and reports the metrics of BenchmarkObjectRefRatio. Each batch runs under the pprof
// label side=alone or side=with, so that a CPU profile (-cpuprofile) of the benchmark splits
// into the two configurations (go tool pprof -tagfocus side=with).
func sideBySide(b *testing.B, src component.Component, templ plog.Logs) {
	extID := component.MustNewID("trace_context")
	host := benchHost{extID: src}
	procs := make([]processor.Logs, 2)
	for i, ext := range []*component.ID{nil, &extID} {
		procs[i] = newObjectRef(b, host, ext, consumertest.NewNop())
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

// BenchmarkLookup is the extension's share alone: one look-up of a record's Pod (10% with a
// context, the rest through their ReplicaSet) and of its Node (a kind not held).
func BenchmarkLookup(b *testing.B) {
	e := newBenchExtension(b)
	populate(e, benchObjects())
	names := make([]string, 1000)
	for i := range names {
		j := (i * 7) % benchPods
		names[i] = fmt.Sprintf("web-%d-7d4b9c8f6-%05d", j%benchReplicaSets, j)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		e.SpanContextForObject(ctx, "v1", "Pod", "default", names[i%len(names)], "")
		e.SpanContextForObject(ctx, "v1", "Node", "", "node-12", "")
	}
}
