// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objspans"
)

// Outcomes of a Pod's lifecycle trace (design.md rule 4).
const (
	outcomeReady     = "ready"
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
	outcomeTimeout   = "timeout" // a rollout past rollout_timeout
	outcomeGaveUp    = "gave_up" // a Pod past give_up_after
	outcomeDeleted   = "deleted"
)

// Span names.
const (
	rootSpanName           = "Pod start"
	eventContainerStarted  = "container started"
	eventContainerRestarts = "container restarted"
	containerStartName     = "container start"
)

// originNone is origin.from when the object carries no context.
const originNone = "none"

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
	return objspans.Sum(uid, generation, what)
}

// traceOf is the trace the spans of an object's desired state go into: the context's when
// they are parented under it, else the derived one (design.md rule 3).
func traceOf(uid string, generation int64, o origin) pcommon.TraceID {
	if o.sc.IsValid() && !o.link {
		return pcommon.TraceID(o.sc.TraceID())
	}
	return objspans.TraceID(uid, generation)
}

// rootIDs gives a trace's root span its trace id, span id and parent or link (design.md rule
// 3): the ids derive from the object's uid and generation; the trace id is the origin's when the
// root is parented under it.
func rootIDs(root ptrace.Span, uid string, generation int64, o origin) (pcommon.TraceID, pcommon.SpanID) {
	traceID := traceOf(uid, generation, o)
	switch {
	case o.sc.IsValid() && !o.link:
		root.SetParentSpanID(pcommon.SpanID(o.sc.SpanID()))
		root.TraceState().FromRaw(o.sc.TraceState().String())
	case o.sc.IsValid():
		l := root.Links().AppendEmpty()
		l.SetTraceID(pcommon.TraceID(o.sc.TraceID()))
		l.SetSpanID(pcommon.SpanID(o.sc.SpanID()))
		l.TraceState().FromRaw(o.sc.TraceState().String())
	}
	rootID := objspans.RootSpanID(uid, generation)
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

// pendingPhase is the first condition of phases the Pod had not reached by end (zero: now):
// what it is or was waiting for.
func pendingPhase(pod *corev1.Pod, end time.Time) corev1.PodConditionType {
	for _, ph := range phases {
		if t, ok := conditionTime(pod, ph); !ok || !end.IsZero() && t.After(end) {
			return ph
		}
	}
	return corev1.PodReady
}

// reasonsOf returns "container: reason" for the waiting reasons that match.
func reasonsOf(waiting []waitingReason, match func(waitingReason) bool) []string {
	var out []string
	for _, w := range waiting {
		if match(w) {
			out = append(out, w.container+": "+w.reason)
		}
	}
	return out
}

func putWaiting(s ptrace.Span, reasons []string) {
	if len(reasons) == 0 {
		return
	}
	sl := s.Attributes().PutEmptySlice(attr.LifecycleWaiting)
	for _, r := range reasons {
		sl.AppendEmpty().SetStr(r)
	}
}

// buildTrace makes the Pod's lifecycle trace ending at end with outcome (design.md rules 2-4);
// waiting are the containers' waiting reasons seen while it was pending.
func buildTrace(pod *corev1.Pod, outcome string, end time.Time, o origin, waiting []waitingReason) ptrace.Traces {
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
	a := root.Attributes()
	objref.Put(a, attr.Subject, objref.Ref{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: uid})
	a.PutStr(attr.LifecycleOutcome, outcome)
	a.PutStr(attr.LifecycleParent, o.from)
	child := func(name, what string, from, to time.Time) ptrace.Span {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(traceID)
		s.SetSpanID(objspans.SpanID(uid, pod.Generation, what))
		s.SetParentSpanID(rootID)
		s.SetName(name)
		s.SetKind(ptrace.SpanKindInternal)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(from))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(to))
		return s
	}

	// one child span per condition reached, from the previous one (or creation) to its time
	prev := start
	var initialized time.Time
	for _, ph := range phases {
		t, ok := conditionTime(pod, ph)
		if !ok || t.After(end) {
			continue
		}
		if t.Before(prev) { // conditions are written with second precision and may tie
			t = prev
		}
		s := child(string(ph), string(ph), prev, t)
		putWaiting(s, reasonsOf(waiting, func(w waitingReason) bool { return w.phase == ph }))
		if ph == corev1.PodInitialized {
			initialized = t
		}
		prev = t
	}
	if outcome != outcomeReady && outcome != outcomeSucceeded {
		// the phase it did not get through, up to the end, with what it waited for
		ph := pendingPhase(pod, end)
		reasons := reasonsOf(waiting, func(w waitingReason) bool { return w.phase == ph })
		if pod.Status.Phase != corev1.PodFailed {
			s := child(string(ph), string(ph), prev, end)
			putWaiting(s, reasons)
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Status().SetMessage("not reached")
		}
		root.Status().SetCode(ptrace.StatusCodeError)
		msg := fmt.Sprintf("pod did not become ready: %s after %s", outcome, end.Sub(start).Round(time.Second))
		if pod.Status.Phase != corev1.PodFailed {
			msg += ", waiting for " + string(ph)
		}
		if len(reasons) > 0 {
			msg += " (" + strings.Join(reasons, ", ") + ")"
		}
		root.Status().SetMessage(msg)
	}

	// each container's start (image pull, creation, start) from initialization, or creation
	if initialized.IsZero() {
		initialized = start
	}
	for _, cs := range pod.Status.ContainerStatuses {
		var started time.Time
		switch {
		case cs.RestartCount > 0 && cs.LastTerminationState.Terminated != nil && !cs.LastTerminationState.Terminated.StartedAt.IsZero():
			started = cs.LastTerminationState.Terminated.StartedAt.Time
		case cs.State.Running != nil && !cs.State.Running.StartedAt.IsZero():
			started = cs.State.Running.StartedAt.Time
		case cs.State.Terminated != nil && !cs.State.Terminated.StartedAt.IsZero():
			started = cs.State.Terminated.StartedAt.Time
		}
		reasons := reasonsOf(waiting, func(w waitingReason) bool { return w.container == cs.Name })
		if started.IsZero() && len(reasons) == 0 || started.After(end) {
			continue
		}
		to := started
		if started.IsZero() {
			to = end
		}
		s := child(containerStartName, "container/"+cs.Name, initialized, clampTime(to, initialized, end))
		s.Attributes().PutStr(attr.LifecycleContainerName, cs.Name)
		putWaiting(s, reasons)
		if started.IsZero() {
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Status().SetMessage("not started")
		}
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
