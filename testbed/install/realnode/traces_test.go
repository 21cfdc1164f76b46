// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness/traced"
)

// TestTracedRollout (scenario 5): tracing turned on by `helm upgrade` (traces.enabled, the
// endpoint pointed at the local SigV4-verifying X-Ray server); a Deployment created with a
// trace context gives its rollout span, the new ReplicaSet's scale-up span, each new Pod's
// lifecycle trace (root and condition spans, written from what the real kubelet reported) and
// the spans of the Pods' Events in the Deployment's trace, every request signed with the
// Secret's credentials.
// Then tracing is turned off again: nothing of it stays rendered.
func TestTracedRollout(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	ensureWorkNamespace(t, e)
	ctx := context.Background()
	cs := e.node.Client

	xray := tracingOn(t, e)

	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	replicas := int32(2)
	labels := map[string]string{"app": "traced"}
	tmpl := loggenPod("traced", 20, 100, 0)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: "traced", Namespace: workNamespace,
			Annotations: map[string]string{objecttrace.ContextAnnotation: fmt.Sprintf("00-%s-%s-01", traceID, spanID)},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: tmpl.Spec},
		},
	}
	dep.Spec.Template.Spec.Containers[0].Args = []string{"-rate", "20", "-size", "100"}
	_, err := cs.AppsV1().Deployments(workNamespace).Create(ctx, dep, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.AppsV1().Deployments(workNamespace).Delete(ctx, dep.Name, metav1.DeleteOptions{}) })

	var spans []ptrace.Span
	byName, others := map[string]int{}, map[string]int{} // spans by name, in the trace and not
	require.Eventually(t, func() bool {
		var batches []ptrace.Traces
		for _, b := range xray.Batches() {
			if b.AccessKey != accessKey {
				t.Errorf("a batch signed by %q", b.AccessKey)
			}
			batches = append(batches, b.Traces)
		}
		spans = traced.AllSpans(batches...)
		byName, others = map[string]int{}, map[string]int{}
		for _, s := range spans {
			if s.TraceID().String() == traceID {
				byName[s.Name()]++
			} else {
				name := s.Name()
				if v, ok := s.Attributes().Get(attr.ObjectName); ok && strings.HasPrefix(name, "Deployment") {
					name += " " + v.Str() // whose, for the failure message
				}
				others[name]++
			}
		}
		return byName["Deployment rollout"] >= 1 && byName["ReplicaSet scale up"] >= 1 && byName["Pod start"] >= int(replicas) &&
			byName["Pod.Scheduled"] >= int(replicas) && byName["Pod.Started"] >= int(replicas)
	}, 3*time.Minute, time.Second, "%v", lazyString(func() string {
		// formatted at the failure, not when Eventually was called
		return fmt.Sprintf("spans in the Deployment's trace: %v; in other traces: %v; X-Ray endpoint: %+v", byName, others, xray.Stats())
	}))
	st := xray.Stats()
	t.Logf("%d spans at the X-Ray endpoint, in the Deployment's trace by name: %v, in others %v; requests %d accepted %d, errors %v", len(spans), byName, others, st.Requests, st.Accepted, st.Errors)
	assert.Equal(t, 1, byName["Deployment rollout"], "one rollout span")
	assert.Equal(t, int(replicas), byName["Pod start"], "one lifecycle trace per new Pod")
	for _, c := range []string{"PodScheduled", "Initialized", "ContainersReady", "Ready"} {
		assert.Equal(t, int(replicas), byName[c], "the %s span of each Pod, from the real kubelet's conditions", c)
	}
	// The Pods' Events (the real scheduler's and kubelet's), seen by the events collector, whose
	// trace_context looks the Pod and its owners up (mode lookup): in the Deployment's trace too.
	inTrace, elsewhere := map[string]int{}, map[string]int{} // the traced Pods' Event spans by name
	for _, sp := range spans {
		if v, ok := sp.Attributes().Get(attr.ObjectName); !ok || !strings.HasPrefix(v.Str(), "traced-") || !strings.HasPrefix(sp.Name(), "Pod.") {
			continue
		}
		if sp.TraceID().String() == traceID {
			inTrace[sp.Name()]++
		} else {
			elsewhere[sp.Name()]++
		}
	}
	t.Logf("the traced Pods' Event spans: in the Deployment's trace %v, elsewhere %v", inTrace, elsewhere)
	for _, reason := range []string{"Scheduled", "Pulled", "Created", "Started"} {
		assert.GreaterOrEqual(t, inTrace["Pod."+reason], int(replicas), "each Pod's %s Event span in the Deployment's trace", reason)
	}
	assert.Empty(t, elsewhere, "the traced Pods' Event spans in another trace")
	assert.Empty(t, st.Errors, "the X-Ray endpoint refused requests")

	// The Pods' own lines (loggen's, naming no object) carry the Deployment's trace id: the node
	// pipeline gives a line its Pod's context (object_ref's own_pod, from pod_metadata's Pods
	// and their fetched owners), only with tracing on.
	var withID, without int
	var sample string
	require.Eventually(t, func() bool {
		withID, without = 0, 0
		evs, _ := e.storedEvents() // what could be read; the next round reads again
		for _, ev := range evs {
			var m struct {
				TraceID  string         `json:"trace_id"`
				Resource map[string]any `json:"resource"`
			}
			if json.Unmarshal([]byte(ev.Message), &m) != nil {
				continue
			}
			if pod, _ := m.Resource["k8s.pod.name"].(string); !strings.HasPrefix(pod, "traced-") {
				continue
			}
			if m.TraceID == traceID {
				withID++
			} else {
				without++
				sample = ev.Message
			}
		}
		return withID >= 20*int(replicas)
	}, 2*time.Minute, time.Second, "the traced Deployment's Pods' lines: %d with its trace id, %d without (one: %s)", withID, without, sample)
	t.Logf("the traced Deployment's Pods' lines: %d with its trace id, %d without", withID, without)
	assert.LessOrEqual(t, without*10, withID, "most lines carry the trace id (the first ones may precede the owners' fetch)")
}

// lazyString formats its function's result when printed: a failure message of values an
// Eventually condition updates.
type lazyString func() string

func (f lazyString) String() string { return f() }
