// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
)

// The extension's own benchmarks: the memory it holds and the cost of a look-up. object_ref
// asking it, side by side with object_ref alone, is measured in testbed/crosscomponent (no
// component module requires another).

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
