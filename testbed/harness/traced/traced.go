// SPDX-License-Identifier: Apache-2.0

// Package traced creates Pods with trace contexts in an API server for a simulated node to log
// for, and reads back what a collector made of them: the traced part of `make run` and of the
// end-to-end scenarios. It is apart from package harness so that importers of harness need
// neither client-go nor pdata.
package traced

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

// The trace context annotations, written by hand as a controller or the original admission
// webhook writes them (not through the product's library, which the tests check).
const (
	SeedContextKey  = "trace.kubernetes.io/context"
	AsyncContextKey = "tracing.k8s.io/traceparent"
)

// Pod is a Pod created in an API server, with a trace context or none, that a simulated
// node writes logs for.
type Pod struct {
	Name string
	// Key and Value are its trace context annotation (none when Key is empty).
	Key, Value string
	Format     nodesim.Format
	// TraceID is the trace id its log lines get through trace_context; empty: none.
	TraceID string
	// ParentSpanID is the span its lifecycle trace's root is a child of; LinkSpanID the span it
	// links to; both empty: a trace of its own.
	ParentSpanID, LinkSpanID string
	// Pod is the object as created.
	Pod *corev1.Pod
}

// DeploymentTraceID is the trace of the Deployment whose ReplicaSet's Pods Pods propagates.
const DeploymentTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"

// Pods returns the Pods of the traced scenarios: the seed's key as traceparent text and
// as the original webhook's binary form (both in the Deployment's trace, as the ReplicaSet
// controller propagates it), the async key (its own trace, linked; its log lines uncorrelated),
// and one without a context.
func Pods() []*Pod {
	return []*Pod{
		{Name: "store-a", Key: SeedContextKey, Value: "00-" + DeploymentTraceID + "-00f067aa0ba90201-01", Format: nodesim.FormatKlogText, TraceID: DeploymentTraceID, ParentSpanID: "00f067aa0ba90201"},
		{Name: "store-b", Key: SeedContextKey, Value: BinaryContext(DeploymentTraceID, "00f067aa0ba90202"), Format: nodesim.FormatKlogJSON, TraceID: DeploymentTraceID, ParentSpanID: "00f067aa0ba90202"},
		// A link context: its lifecycle trace links to it, and its log lines carry no trace id
		// (a record has one trace id and no links; tracecontextextension design.md rule 10).
		{Name: "store-c", Key: AsyncContextKey, Value: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Format: nodesim.FormatKlogText, LinkSpanID: "b7ad6b7169203331"},
		{Name: "plain", Format: nodesim.FormatKlogText},
	}
}

// BinaryContext is the original webhook's base64 span context: version 0, field 0 trace id,
// field 1 span id, field 2 options (sampled).
func BinaryContext(traceID, spanID string) string {
	t, _ := hex.DecodeString(traceID)
	s, _ := hex.DecodeString(spanID)
	b := append([]byte{0, 0}, t...)
	b = append(append(b, 1), s...)
	return base64.StdEncoding.EncodeToString(append(b, 2, 1))
}

// Create creates namespace ns (with its default service account) and the Pods on
// node, and returns their identities for the node simulator.
func Create(ctx context.Context, client kubernetes.Interface, ns, node string, pods []*Pod) ([]nodesim.PodIdentity, error) {
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	// no controller manager creates the service account Pods need
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	var ids []nodesim.PodIdentity
	for _, p := range pods {
		obj := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
		}
		if p.Key != "" {
			obj.Annotations = map[string]string{p.Key: p.Value}
		}
		var err error
		if p.Pod, err = client.CoreV1().Pods(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		ids = append(ids, nodesim.PodIdentity{Namespace: ns, Name: p.Name, UID: string(p.Pod.UID), Format: p.Format})
	}
	return ids, nil
}

// MarkReady writes the Pods' status as a kubelet would once they started: PodScheduled,
// Initialized, ContainersReady and Ready at 1, 2, 3 and 3 seconds after the first Pod's
// creation. It returns the Ready time.
func MarkReady(ctx context.Context, client kubernetes.Interface, pods []*Pod) (time.Time, error) {
	at := func(d int) metav1.Time {
		return metav1.NewTime(pods[0].Pod.CreationTimestamp.Add(time.Duration(d) * time.Second))
	}
	for _, p := range pods {
		st := p.Pod.DeepCopy()
		st.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(1)},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at(2)},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at(3)},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(3)},
		}}
		if _, err := client.CoreV1().Pods(st.Namespace).UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
			return time.Time{}, err
		}
	}
	return at(3).Time, nil
}

// StoredRecord is a stored log event as JSON: its trace id and the object it names.
type StoredRecord struct {
	Group, Stream, Message string
	TraceID                string
	Kind, Namespace, Name  string
}

// StoredRecords returns every JSON event the server holds with its trace id and subject (plain
// text events are left out).
func StoredRecords(srv *localcloudwatch.Server) []StoredRecord {
	var out []StoredRecord
	for _, g := range srv.Groups() {
		streams, _ := srv.Streams(g.Name)
		for _, st := range streams {
			evs, _ := srv.Events(g.Name, st.Name)
			for _, ev := range evs {
				var m struct {
					TraceID    string         `json:"trace_id"`
					Attributes map[string]any `json:"attributes"`
				}
				if json.Unmarshal([]byte(ev.Message), &m) != nil {
					continue
				}
				r := StoredRecord{Group: g.Name, Stream: st.Name, Message: ev.Message, TraceID: m.TraceID}
				r.Kind, _ = m.Attributes["otelcol_k8s.object.kind"].(string)
				r.Namespace, _ = m.Attributes["otelcol_k8s.object.namespace"].(string)
				r.Name, _ = m.Attributes["otelcol_k8s.object.name"].(string)
				out = append(out, r)
			}
		}
	}
	return out
}

// AllSpans returns the spans of traces, in order.
func AllSpans(traces ...ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for _, td := range traces {
		rss := td.ResourceSpans()
		for i := range rss.Len() {
			for j := range rss.At(i).ScopeSpans().Len() {
				ss := rss.At(i).ScopeSpans().At(j).Spans()
				for k := range ss.Len() {
					out = append(out, ss.At(k))
				}
			}
		}
	}
	return out
}

// Report prints the lifecycle spans (each trace's root, then its children) and, per
// traced Pod, its number of log lines and their trace ids, with the last perPod lines.
func Report(w io.Writer, spans []ptrace.Span, records []StoredRecord, ns string, pods []*Pod, perPod int) {
	_, _ = fmt.Fprintf(w, "lifecycle spans received by the local X-Ray OTLP endpoint: %d\n", len(spans))
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].StartTimestamp() < spans[j].StartTimestamp() })
	for _, root := range spans {
		if !root.ParentSpanID().IsEmpty() && root.Name() != "Pod start" && root.Name() != "Deployment rollout" {
			continue
		}
		name, _ := root.Attributes().Get("otelcol_k8s.object.name")
		outcome, _ := root.Attributes().Get("otelcol_k8s.lifecycle.outcome")
		from, _ := root.Attributes().Get("otelcol_k8s.lifecycle.parent")
		rel := "no parent"
		if !root.ParentSpanID().IsEmpty() {
			rel = "parent " + root.ParentSpanID().String()
		}
		if root.Links().Len() > 0 {
			rel = "link to " + root.Links().At(0).TraceID().String() + "/" + root.Links().At(0).SpanID().String()
		}
		_, _ = fmt.Fprintf(w, "  %s %s  trace %s span %s (%s, context from %s)  %s  %s\n", root.Name(), name.Str(),
			root.TraceID(), root.SpanID(), rel, from.Str(), duration(root), outcome.Str())
		for _, s := range spans {
			if s.ParentSpanID() == root.SpanID() && s.TraceID() == root.TraceID() {
				_, _ = fmt.Fprintf(w, "      %-16s %s .. %s  %s\n", s.Name(), s.StartTimestamp().AsTime().Format("15:04:05"), s.EndTimestamp().AsTime().Format("15:04:05"), duration(s))
			}
		}
	}
	for _, p := range pods {
		var mine []StoredRecord
		ids := map[string]int{}
		for _, r := range records {
			if r.Kind == "Pod" && r.Namespace == ns && r.Name == p.Name {
				mine = append(mine, r)
				ids[r.TraceID]++
			}
		}
		_, _ = fmt.Fprintf(w, "\nlog lines naming Pod %s/%s (%s): %d, by trace_id: %s\n", ns, p.Name, contextOf(p), len(mine), formatCounts(ids))
		if len(mine) > perPod {
			mine = mine[len(mine)-perPod:]
		}
		for _, r := range mine {
			_, _ = fmt.Fprintf(w, "    %s\n", harness.Shorten(r.Message, 300))
		}
	}
}

func contextOf(p *Pod) string {
	if p.Key == "" {
		return "no context"
	}
	return p.Key + "=" + p.Value
}

func duration(s ptrace.Span) time.Duration {
	return s.EndTimestamp().AsTime().Sub(s.StartTimestamp().AsTime())
}

func formatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := k
		if k == "" {
			name = "(none)"
		}
		parts = append(parts, fmt.Sprintf("%s: %d", name, m[k]))
	}
	return strings.Join(parts, ", ")
}
