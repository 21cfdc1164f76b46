// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
)

// statusSource is a podmeta.StatusSource that holds nothing; only its WatchesStatus matters.
type statusSource struct {
	component.StartFunc
	component.ShutdownFunc
	status bool
}

func (statusSource) PodByUID(string) (*podmeta.Pod, bool)                      { return nil, false }
func (statusSource) PodByName(string, string) (*podmeta.Pod, bool)             { return nil, false }
func (statusSource) WaitPod(context.Context, string) (*podmeta.Pod, bool)      { return nil, false }
func (statusSource) Subscribe(func(podmeta.Event)) func()                      { return func() {} }
func (statusSource) SubscribeAll(func(podmeta.Event)) ([]*podmeta.Pod, func()) { return nil, func() {} }
func (s statusSource) WatchesStatus() bool                                     { return s.status }

type plainExtension struct {
	component.StartFunc
	component.ShutdownFunc
}

type extensions map[component.ID]component.Component

func (h extensions) GetExtensions() map[component.ID]component.Component { return h }

func TestFindPodSource(t *testing.T) {
	id := component.MustNewID("pod_metadata")
	for _, tc := range []struct {
		name    string
		ext     component.Component
		wantErr string
	}{
		{"with status", statusSource{status: true}, ""},
		{"metadata only", statusSource{}, `kube_lifecycle: pod_metadata: extension "pod_metadata" watches metadata only; set its pod_status: true`},
		{"another extension", plainExtension{}, `kube_lifecycle: pod_metadata: extension "pod_metadata" (kubelifecyclereceiver.plainExtension) does not serve podmeta.StatusSource`},
		{"missing", nil, `kube_lifecycle: pod_metadata: extension "pod_metadata" is not configured`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := extensions{}
			if tc.ext != nil {
				h[id] = tc.ext
			}
			_, err := findPodSource(h, id)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// TestPodFromMeta checks that a Pod from pod_metadata reads as the informer's trimmed Pod did:
// what trimPod keeps of the whole Pod is what podFromMeta makes of the source's record.
func TestPodFromMeta(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Date(2026, 11, 27, 9, 0, s, 0, time.UTC)) }
	deleting := at(30)
	ctx := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	whole := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-1", Namespace: "shop", UID: "u-1", Generation: 2, ResourceVersion: "42",
			CreationTimestamp: at(0), DeletionTimestamp: &deleting,
			Annotations: map[string]string{objecttrace.ContextAnnotation: ctx, "other": "dropped"},
			Labels:      map[string]string{"app": "web"},
		},
		Spec: corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(1)},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: at(2)},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", RestartCount: 1,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: at(3), FinishedAt: at(4)}},
			}},
		},
	}
	record := &podmeta.Pod{
		UID: "u-1", Namespace: "shop", Name: "web-1", NodeName: "node-1", ResourceVersion: "42",
		Labels: map[string]string{"app": "web"}, Annotations: whole.Annotations,
		Generation: 2, Created: at(0).Time, Deleting: deleting.Time,
		Status: &podmeta.Status{
			Phase: "Running",
			Conditions: []podmeta.Condition{
				{Type: "PodScheduled", Status: "True", LastTransitionTime: at(1).Time},
				{Type: "Ready", Status: "False", Reason: "ContainersNotReady", LastTransitionTime: at(2).Time},
			},
			Containers: []podmeta.ContainerStatus{{
				Name: "app", RestartCount: 1,
				State:           podmeta.ContainerState{Waiting: &podmeta.Waiting{Reason: "CrashLoopBackOff"}},
				LastTermination: podmeta.ContainerState{Terminated: &podmeta.Terminated{ExitCode: 1, Reason: "Error", StartedAt: at(3).Time, FinishedAt: at(4).Time}},
			}},
		},
	}
	want, err := trimPod(whole)
	require.NoError(t, err)
	assert.Equal(t, want, podFromMeta(record))
}
