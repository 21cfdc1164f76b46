// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"crypto/sha256"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// Outcomes of a Pod's lifecycle trace (design.md rule 4).
const (
	outcomeReady     = "ready"
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
	outcomeTimeout   = "timeout"
	outcomeDeleted   = "deleted"
)

// Span names.
const (
	rootSpanName           = "Pod start"
	eventContainerStarted  = "container started"
	eventContainerRestarts = "container restarted"
)

// phases are the Pod conditions, in the order a starting Pod passes them (design.md rule 2).
var phases = []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady}

// origin is where a trace's context came from (design.md rule 3).
type origin struct {
	sc   trace.SpanContext
	link bool   // link to sc instead of parenting under it
	from string // "pod", "owner" or "none"
}

// ids returns the deterministic ids of a Pod's trace (design.md rule 3): the trace id and the
// span id of the root and of each phase, from the uid and generation.
func ids(uid string, generation int64, what string) [32]byte {
	return sha256.Sum256([]byte(uid + "/" + strconv.FormatInt(generation, 10) + "/" + what))
}

// rootIDs gives a trace's root span its trace id, span id and parent or link (design.md rule
// 3): the ids derive from the object's uid and generation; the trace id is the origin's when the
// root is parented under it.
func rootIDs(root ptrace.Span, uid string, generation int64, o origin) (pcommon.TraceID, pcommon.SpanID) {
	sum := ids(uid, generation, "root")
	traceID := pcommon.TraceID(sum[:16])
	switch {
	case o.sc.IsValid() && !o.link:
		traceID = pcommon.TraceID(o.sc.TraceID())
		root.SetParentSpanID(pcommon.SpanID(o.sc.SpanID()))
		root.TraceState().FromRaw(o.sc.TraceState().String())
	case o.sc.IsValid():
		l := root.Links().AppendEmpty()
		l.SetTraceID(pcommon.TraceID(o.sc.TraceID()))
		l.SetSpanID(pcommon.SpanID(o.sc.SpanID()))
		l.TraceState().FromRaw(o.sc.TraceState().String())
	}
	rootID := pcommon.SpanID(sum[16:24])
	root.SetTraceID(traceID)
	root.SetSpanID(rootID)
	return traceID, rootID
}

// conditionTime returns when the Pod's condition t last became True.
func conditionTime(pod *corev1.Pod, t corev1.PodConditionType) (time.Time, bool) {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == t && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// desiredState says whether the Pod reached its desired state (design.md rule 4) and when.
func desiredState(pod *corev1.Pod) (outcome string, at time.Time, ok bool) {
	if t, ok := conditionTime(pod, corev1.PodReady); ok {
		return outcomeReady, t, true
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		end := pod.CreationTimestamp.Time
		for _, cs := range pod.Status.ContainerStatuses {
			if term := cs.State.Terminated; term != nil && term.FinishedAt.After(end) {
				end = term.FinishedAt.Time
			}
		}
		if pod.Status.Phase == corev1.PodSucceeded {
			return outcomeSucceeded, end, true
		}
		return outcomeFailed, end, true
	}
	return "", time.Time{}, false
}

// buildTrace makes the Pod's lifecycle trace ending at end with outcome (design.md rules 2-4).
func buildTrace(pod *corev1.Pod, outcome string, end time.Time, o origin) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/otelcol-k8s/otelcol-k8s/receiver/kubelifecyclereceiver")

	uid := string(pod.UID)
	root := ss.Spans().AppendEmpty()
	traceID, rootID := rootIDs(root, uid, pod.Generation, o)
	start := pod.CreationTimestamp.Time
	if end.Before(start) {
		end = start
	}
	root.SetName(rootSpanName)
	root.SetKind(ptrace.SpanKindInternal)
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
	if outcome != outcomeReady && outcome != outcomeSucceeded {
		root.Status().SetCode(ptrace.StatusCodeError)
		root.Status().SetMessage("pod did not become ready: " + outcome)
	}
	a := root.Attributes()
	objref.Put(a, attr.Subject, objref.Ref{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: uid})
	a.PutStr(attr.LifecycleOutcome, outcome)
	a.PutStr(attr.LifecycleParent, o.from)

	// one child span per condition reached, from the previous one (or creation) to its time
	prev := start
	for _, ph := range phases {
		t, ok := conditionTime(pod, ph)
		if !ok || t.After(end) {
			continue
		}
		if t.Before(prev) { // conditions are written with second precision and may tie
			t = prev
		}
		sum := ids(uid, pod.Generation, string(ph))
		var id pcommon.SpanID
		copy(id[:], sum[:8])
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(traceID)
		s.SetSpanID(id)
		s.SetParentSpanID(rootID)
		s.SetName(string(ph))
		s.SetKind(ptrace.SpanKindInternal)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(prev))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(t))
		prev = t
	}

	// container starts and restarts as events of the root span
	for _, cs := range pod.Status.ContainerStatuses {
		if run := cs.State.Running; run != nil && !run.StartedAt.IsZero() && !run.StartedAt.After(end) {
			ev := root.Events().AppendEmpty()
			ev.SetName(eventContainerStarted)
			ev.SetTimestamp(pcommon.NewTimestampFromTime(run.StartedAt.Time))
			ev.Attributes().PutStr(attr.LifecycleContainerName, cs.Name)
			ev.Attributes().PutInt(attr.LifecycleContainerRestarts, int64(cs.RestartCount))
		}
		if term := cs.LastTerminationState.Terminated; cs.RestartCount > 0 && term != nil && !term.FinishedAt.After(end) {
			ev := root.Events().AppendEmpty()
			ev.SetName(eventContainerRestarts)
			ev.SetTimestamp(pcommon.NewTimestampFromTime(term.FinishedAt.Time))
			ev.Attributes().PutStr(attr.LifecycleContainerName, cs.Name)
			ev.Attributes().PutInt(attr.LifecycleContainerRestarts, int64(cs.RestartCount))
		}
	}
	return td
}
