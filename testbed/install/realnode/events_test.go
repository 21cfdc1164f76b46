// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// eventRecord is what the events collector stored of one Event state.
type eventRecord struct {
	uid, state, reason, controller string
	stored                         time.Time // the local server's ingestion time
}

// eventRecords reads every kube_events record the local server holds, by "uid state".
func eventRecords(t *testing.T, e *env) map[string][]eventRecord {
	t.Helper()
	out := map[string][]eventRecord{}
	for _, ev := range mustStored(t, e) {
		var m struct {
			Attributes map[string]any `json:"attributes"`
		}
		if json.Unmarshal([]byte(ev.Message), &m) != nil {
			continue
		}
		uid, _ := m.Attributes["otelcol_k8s.event.uid"].(string)
		if uid == "" {
			continue
		}
		r := eventRecord{uid: uid, stored: time.UnixMilli(ev.IngestionTime)}
		r.state, _ = m.Attributes["otelcol_k8s.event.series.state"].(string)
		r.reason, _ = m.Attributes["otelcol_k8s.event.reason"].(string)
		r.controller, _ = m.Attributes["otelcol_k8s.event.reporting_controller"].(string)
		out[uid+" "+r.state] = append(out[uid+" "+r.state], r)
	}
	return out
}

// eventsPod returns the running events collector Pod.
func eventsPod(t *testing.T, e *env) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	require.Eventually(t, func() bool {
		list, err := e.node.Client.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + release + "-events"})
		if err != nil {
			return false
		}
		for i := range list.Items {
			if p := &list.Items[i]; p.DeletionTimestamp == nil && podReady(p) {
				pod = p
				return true
			}
		}
		return false
	}, 2*time.Minute, 200*time.Millisecond, "no Ready events collector Pod")
	return pod
}

// TestRealEventsExactlyOnce (scenario 4): a CrashLoopBackOff Pod (the kubelet's legacy BackOff
// series, its count PATCHed at each restart) and a Deployment rollout (the controllers'
// Events), with the scheduler's events.k8s.io Events for every Pod, and the events collector's
// Pod deleted twice in the middle (gracefully, then forced): every Event the API holds for them
// becomes records — a singleton for an Event seen at count 1, one start for each series —
// exactly once, but for the records a forced kill repeats by design (those delivered within
// one checkpoint interval before it, at most once more).
func TestRealEventsExactlyOnce(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	ensureWorkNamespace(t, e)
	ctx := context.Background()
	cs := e.node.Client

	crash := loggenPod("crashloop", 10, 100, 0)
	crash.Spec.Containers[0].Args = []string{"-streams", "neither"} // loggen refuses it: exit 2
	_, err := cs.CoreV1().Pods(workNamespace).Create(ctx, crash, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { deletePods(t, e, []*corev1.Pod{crash}) })

	replicas := int32(2)
	labels := map[string]string{"app": "rollout"}
	tmpl := loggenPod("rollout", 10, 100, 0)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "rollout", Namespace: workNamespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: tmpl.Spec},
		},
	}
	dep.Spec.Template.Spec.Containers[0].Args = []string{"-rate", "10", "-size", "100"}
	_, err = cs.AppsV1().Deployments(workNamespace).Create(ctx, dep, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.AppsV1().Deployments(workNamespace).Delete(ctx, dep.Name, metav1.DeleteOptions{})
	})
	rolledOut := func(generation int64) func() bool {
		return func() bool {
			d, err := cs.AppsV1().Deployments(workNamespace).Get(ctx, dep.Name, metav1.GetOptions{})
			return err == nil && d.Status.ObservedGeneration >= generation && d.Status.UpdatedReplicas == replicas &&
				d.Status.AvailableReplicas == replicas && d.Status.Replicas == replicas
		}
	}
	require.Eventually(t, rolledOut(1), 2*time.Minute, 200*time.Millisecond, "the Deployment never became available")

	restarts := func() int32 {
		p, err := cs.CoreV1().Pods(workNamespace).Get(ctx, crash.Name, metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return 0
		}
		return p.Status.ContainerStatuses[0].RestartCount
	}
	require.Eventually(t, func() bool { return restarts() >= 1 }, 2*time.Minute, time.Second, "the Pod never crash-looped")

	// The events collector's Pod is deleted twice while the BackOff series goes on and a
	// rollout starts: first as a rolling update would (SIGTERM: it saves its checkpoint and
	// releases the Lease), then forced (grace period 0: the container is killed, the Lease
	// expires). The Deployment's next Pod takes over each time.
	killEvents := func(grace int64) time.Time {
		victim := eventsPod(t, e)
		require.NoError(t, cs.CoreV1().Pods(namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}))
		at := time.Now()
		successor := eventsPod(t, e)
		require.NotEqual(t, victim.UID, successor.UID)
		t.Logf("events Pod %s deleted (grace %ds); %s Ready %v later", victim.Name, grace, successor.Name, time.Since(at).Round(time.Second))
		return at
	}
	killEvents(30)
	require.Eventually(t, func() bool { return restarts() >= 2 }, 2*time.Minute, time.Second, "the BackOff series went on")
	killedAt := killEvents(0)
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"test/restartedAt":%q}}}}}`, time.Now().Format(time.RFC3339))
	_, err = cs.AppsV1().Deployments(workNamespace).Patch(ctx, dep.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
	require.Eventually(t, rolledOut(2), 2*time.Minute, 200*time.Millisecond, "the rollout never finished")
	require.Eventually(t, func() bool { return restarts() >= 3 }, 3*time.Minute, time.Second, "the BackOff series went on")

	// Every Event the API holds for the workloads, in both APIs' view (core/v1 lists the
	// events.k8s.io ones too), has its records.
	var want map[string]string // uid -> the state its first record must have
	var describe, missing []string
	require.Eventually(t, func() bool {
		list, err := cs.CoreV1().Events(workNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		want = map[string]string{}
		describe, missing = describe[:0], missing[:0]
		for _, ev := range list.Items {
			count := ev.Count
			if ev.Series != nil {
				count = ev.Series.Count
			}
			state := "singleton"
			if count >= 2 {
				state = "start"
			}
			want[string(ev.UID)] = state
			describe = append(describe, fmt.Sprintf("%s/%s %s x%d", eventSource(ev), ev.Reason, ev.InvolvedObject.Name, count))
		}
		got := eventRecords(t, e)
		for _, ev := range list.Items {
			uid := string(ev.UID)
			if len(got[uid+" "+want[uid]]) == 0 {
				var has []string
				for _, st := range []string{"singleton", "start", "ongoing", "finished"} {
					if len(got[uid+" "+st]) > 0 {
						has = append(has, st)
					}
				}
				missing = append(missing, fmt.Sprintf("%s %s/%s %s (created %s, last %s, %s) has %v",
					uid, eventSource(ev), ev.Reason, ev.InvolvedObject.Name, ev.CreationTimestamp.Format(time.RFC3339), ev.LastTimestamp.Format(time.RFC3339), want[uid], has))
			}
		}
		return len(missing) == 0
	}, 2*time.Minute, time.Second, "Events without their records: %v", &missing)
	got := eventRecords(t, e)
	reasons := map[string]int{}
	// A forced kill repeats at most what was delivered after the last checkpoint write, which
	// is at most checkpoint.interval (5 s, shipped default) before the kill: the receiver
	// moves its checkpoint only past delivered records (no exporter queue) and writes it at
	// most once per interval (receiver/kubeeventsreceiver/design.md). Nothing else repeats.
	const checkpointInterval = 5 * time.Second
	repeated := 0
	for key, rs := range got {
		reasons[rs[0].reason+" "+rs[0].state]++
		if len(rs) == 1 {
			continue
		}
		repeated += len(rs) - 1
		first := rs[0].stored
		for _, r := range rs[1:] {
			if r.stored.Before(first) {
				first = r.stored
			}
		}
		inWindow := !first.Before(killedAt.Add(-checkpointInterval-time.Second)) && !first.After(killedAt)
		assert.True(t, inWindow && len(rs) == 2, "%s stored %d times, first at %v, %v before the forced kill", key, len(rs), first.Format(time.RFC3339Nano), killedAt.Sub(first))
	}
	for uid, state := range want {
		if state == "singleton" {
			assert.Empty(t, got[uid+" start"], "Event %s has count 1 but a series start", uid)
		}
	}
	sort.Strings(describe)
	t.Logf("%d Events in the API (%v); records by reason and state: %v; %d repeated after the forced kill", len(want), describe, reasons, repeated)
	assert.Positive(t, reasons["BackOff start"], "the kubelet's BackOff series")
	assert.Positive(t, reasons["Scheduled singleton"], "the scheduler's events.k8s.io Events")
	assert.Positive(t, reasons["ScalingReplicaSet singleton"]+reasons["ScalingReplicaSet start"], "the deployment controller's Events")
}

// eventSource names who wrote an Event: its reporting controller, or a legacy Event's source.
func eventSource(ev corev1.Event) string {
	if ev.ReportingController != "" {
		return ev.ReportingController
	}
	return ev.Source.Component
}
