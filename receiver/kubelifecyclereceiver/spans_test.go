// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func at(sec int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(sec) * time.Second)) }

func cond(t corev1.PodConditionType, sec int) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: at(sec)}
}

// startedPod was created at t0, scheduled at +1s, initialized at +3s, its container started at
// +4s (after one restart at +5s... see below) and it became ready at +7s.
func startedPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "0b5e3c1a-1111-4222-8333-444455556666", Generation: 1, CreationTimestamp: at(0)},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				cond(corev1.PodReady, 7), cond(corev1.PodScheduled, 1), cond(corev1.ContainersReady, 7), cond(corev1.PodInitialized, 3),
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", RestartCount: 1,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(6)}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: at(5)}},
			}},
		},
	}
}

type wantSpan struct {
	name       string
	start, end int // seconds after t0
}

func TestBuildTrace(t *testing.T) {
	t.Parallel()
	ctxSC := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 1}, SpanID: trace.SpanID{0x00, 0xf0, 2}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	pod := startedPod()
	// deterministic ids: sha256("<uid>/1/root")[:16] is the trace id, [16:24] the root span id
	rootSum := ids(string(pod.UID), 1, "root")
	var ownTrace pcommon.TraceID
	copy(ownTrace[:], rootSum[:16])

	allPhases := []wantSpan{{"PodScheduled", 0, 1}, {"Initialized", 1, 3}, {"ContainersReady", 3, 7}, {"Ready", 7, 7}, {containerStartName, 3, 6}}
	tests := []struct {
		name       string
		pod        *corev1.Pod
		outcome    string
		end        int
		origin     origin
		wantTrace  pcommon.TraceID
		wantParent pcommon.SpanID
		wantLink   bool
		wantSpans  []wantSpan
		wantError  bool
		wantEvents []string
	}{
		{
			name: "own trace", pod: pod, outcome: outcomeReady, end: 7, origin: origin{from: "none"},
			wantTrace: ownTrace, wantSpans: allPhases,
			wantEvents: []string{eventContainerStarted, eventContainerRestarts},
		},
		{
			name: "parented under the Pod's context", pod: pod, outcome: outcomeReady, end: 7, origin: origin{sc: ctxSC, from: "pod"},
			wantTrace: pcommon.TraceID(ctxSC.TraceID()), wantParent: pcommon.SpanID(ctxSC.SpanID()), wantSpans: allPhases,
			wantEvents: []string{eventContainerStarted, eventContainerRestarts},
		},
		{
			name: "linked to the Pod's context", pod: pod, outcome: outcomeReady, end: 7, origin: origin{sc: ctxSC, link: true, from: "pod"},
			wantTrace: ownTrace, wantLink: true, wantSpans: allPhases,
			wantEvents: []string{eventContainerStarted, eventContainerRestarts},
		},
		{
			name: "deleted after scheduling: only what happened before the end", pod: pod, outcome: outcomeDeleted, end: 2, origin: origin{from: "none"},
			wantTrace: ownTrace, wantSpans: []wantSpan{{"PodScheduled", 0, 1}, {"Initialized", 1, 2}}, wantError: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := buildTrace(tt.pod, tt.outcome, t0.Add(time.Duration(tt.end)*time.Second), tt.origin, nil)
			spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			require.Equal(t, 1+len(tt.wantSpans), spans.Len())
			root := spans.At(0)
			assert.Equal(t, rootSpanName, root.Name())
			assert.Equal(t, tt.wantTrace, root.TraceID())
			assert.Equal(t, pcommon.SpanID(rootSum[16:24]), root.SpanID())
			assert.Equal(t, tt.wantParent, root.ParentSpanID())
			assert.Equal(t, t0, root.StartTimestamp().AsTime())
			assert.Equal(t, t0.Add(time.Duration(tt.end)*time.Second), root.EndTimestamp().AsTime())
			if tt.wantLink {
				require.Equal(t, 1, root.Links().Len())
				assert.Equal(t, pcommon.TraceID(ctxSC.TraceID()), root.Links().At(0).TraceID())
				assert.Equal(t, pcommon.SpanID(ctxSC.SpanID()), root.Links().At(0).SpanID())
			} else {
				assert.Equal(t, 0, root.Links().Len())
			}
			wantCode := ptrace.StatusCodeUnset
			if tt.wantError {
				wantCode = ptrace.StatusCodeError
			}
			assert.Equal(t, wantCode, root.Status().Code())
			outcome, _ := root.Attributes().Get("otelcol_k8s.lifecycle.outcome")
			assert.Equal(t, tt.outcome, outcome.Str())
			name, _ := root.Attributes().Get("otelcol_k8s.object.name")
			assert.Equal(t, "web-1", name.Str())
			for i, w := range tt.wantSpans {
				s := spans.At(1 + i)
				assert.Equal(t, w.name, s.Name())
				assert.Equal(t, tt.wantTrace, s.TraceID())
				assert.Equal(t, root.SpanID(), s.ParentSpanID())
				what := w.name
				if what == containerStartName {
					what = "container/app"
				}
				sum := ids(string(pod.UID), 1, what)
				assert.Equal(t, pcommon.SpanID(sum[:8]), s.SpanID())
				assert.Equal(t, t0.Add(time.Duration(w.start)*time.Second), s.StartTimestamp().AsTime(), w.name)
				assert.Equal(t, t0.Add(time.Duration(w.end)*time.Second), s.EndTimestamp().AsTime(), w.name)
			}
			var events []string
			for i := range root.Events().Len() {
				events = append(events, root.Events().At(i).Name())
			}
			assert.Equal(t, tt.wantEvents, events)
		})
	}
}

func TestDesiredState(t *testing.T) {
	t.Parallel()
	notReady := startedPod()
	notReady.Status.Conditions = notReady.Status.Conditions[1:]
	succeeded := startedPod()
	succeeded.Status.Conditions = nil
	succeeded.Status.Phase = corev1.PodSucceeded
	succeeded.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: at(9)}}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		want    string
		wantAt  int
		wantHit bool
	}{
		{"ready", startedPod(), outcomeReady, 7, true},
		{"not ready yet", notReady, "", 0, false},
		{"succeeded without ready", succeeded, outcomeSucceeded, 9, true},
	}
	for _, tt := range tests {
		got, when, ok := desiredState(tt.pod)
		assert.Equal(t, tt.wantHit, ok, tt.name)
		assert.Equal(t, tt.want, got, tt.name)
		if ok {
			assert.Equal(t, t0.Add(time.Duration(tt.wantAt)*time.Second), when, tt.name)
		}
	}
}

// TestGiveUpSaysWhatWasSlow: a Pod given up on while its image pull backs off has a span for
// the phase it did not get through, up to the end, and a container start span that never
// ended, both with the waiting reasons; the root's message names the phase and why (design.md
// rule 4).
func TestGiveUpSaysWhatWasSlow(t *testing.T) {
	t.Parallel()
	pod := startedPod()
	pod.Status.Phase = corev1.PodPending
	pod.Status.Conditions = []corev1.PodCondition{cond(corev1.PodScheduled, 1), cond(corev1.PodInitialized, 2)}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
	waiting := []waitingReason{
		{container: "app", reason: "ErrImagePull", phase: corev1.ContainersReady},
		{container: "app", reason: "ImagePullBackOff", phase: corev1.ContainersReady},
	}
	td := buildTrace(pod, outcomeGaveUp, t0.Add(time.Hour), origin{from: originNone}, waiting)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	require.Equal(t, 5, spans.Len()) // root, PodScheduled, Initialized, ContainersReady (open), container start
	root := spans.At(0)
	assert.Equal(t, ptrace.StatusCodeError, root.Status().Code())
	assert.Equal(t, "pod did not become ready: gave_up after 1h0m0s, waiting for ContainersReady (app: ErrImagePull, app: ImagePullBackOff)", root.Status().Message())
	open := spans.At(3)
	assert.Equal(t, "ContainersReady", open.Name())
	assert.Equal(t, t0.Add(2*time.Second), open.StartTimestamp().AsTime())
	assert.Equal(t, t0.Add(time.Hour), open.EndTimestamp().AsTime())
	assert.Equal(t, ptrace.StatusCodeError, open.Status().Code())
	w, _ := open.Attributes().Get("otelcol_k8s.lifecycle.waiting")
	assert.Equal(t, []any{"app: ErrImagePull", "app: ImagePullBackOff"}, w.Slice().AsRaw())
	start := spans.At(4)
	assert.Equal(t, containerStartName, start.Name())
	assert.Equal(t, t0.Add(2*time.Second), start.StartTimestamp().AsTime())
	assert.Equal(t, t0.Add(time.Hour), start.EndTimestamp().AsTime())
	assert.Equal(t, "not started", start.Status().Message())

	// the same Pod, ready after the pull: no error anywhere, the pull's real duration
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = append(pod.Status.Conditions, cond(corev1.ContainersReady, 180), cond(corev1.PodReady, 180))
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(179)}}
	td = buildTrace(pod, outcomeReady, t0.Add(180*time.Second), origin{from: originNone}, waiting)
	spans = td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		assert.Equal(t, ptrace.StatusCodeUnset, spans.At(i).Status().Code(), spans.At(i).Name())
	}
	start = spans.At(spans.Len() - 1)
	require.Equal(t, containerStartName, start.Name())
	assert.Equal(t, 177*time.Second, start.EndTimestamp().AsTime().Sub(start.StartTimestamp().AsTime()))
}
