// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestShortLivedAndDeletedPods (scenario 3): Pods that live about a second (they write their
// lines and exit; each is deleted as soon as it has finished, so the kubelet removes its files)
// and Pods deleted while they log (SIGTERM: each writes its end line with the count it
// wrote, then the kubelet removes its files). Every line of each arrives once, read to the end.
func TestShortLivedAndDeletedPods(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	ensureWorkNamespace(t, e)
	ctx := context.Background()
	pods := e.node.Client.CoreV1().Pods(workNamespace)

	const short, lines = 8, 200
	var ws []loggen
	var all []*corev1.Pod
	for i := range short {
		p := loggenPod(fmt.Sprintf("short-%d", i), 800, lineSize, lines)
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Spec.Containers[0].Args = append(p.Spec.Containers[0].Args, "-exit")
		all = append(all, p)
		ws = append(ws, loggen{name: p.Name, streams: []string{"stdout", "stderr"}, lines: lines})
	}
	const deleted = 3
	var doomed []*corev1.Pod
	for i := range deleted {
		p := loggenPod(fmt.Sprintf("deleted-%d", i), 600, lineSize, 0)
		grace := int64(5)
		p.Spec.TerminationGracePeriodSeconds = &grace
		doomed = append(doomed, p)
		all = append(all, p)
	}
	for _, p := range all {
		_, err := pods.Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	t.Cleanup(func() { deletePods(t, e, all) })

	// Each short-lived Pod is deleted the moment it has succeeded.
	gone := map[string]bool{}
	require.Eventually(t, func() bool {
		for _, w := range ws {
			if gone[w.name] {
				continue
			}
			p, err := pods.Get(ctx, w.name, metav1.GetOptions{})
			if err != nil || p.Status.Phase != corev1.PodSucceeded {
				continue
			}
			require.NoError(t, pods.Delete(ctx, w.name, metav1.DeleteOptions{}))
			gone[w.name] = true
		}
		return len(gone) == short
	}, 2*time.Minute, 100*time.Millisecond, "short-lived Pods that succeeded: %v", gone)

	// The others log for a few seconds, then are deleted while logging.
	require.Eventually(t, func() bool {
		for _, p := range doomed {
			got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil || !podReady(got) {
				return false
			}
		}
		return true
	}, time.Minute, 200*time.Millisecond)
	time.Sleep(4 * time.Second) // logging
	for _, p := range doomed {
		require.NoError(t, pods.Delete(ctx, p.Name, metav1.DeleteOptions{}))
	}
	deletePods(t, e, all)

	// What the deleted Pods wrote is in their end lines, which must arrive too.
	ids := map[string]bool{}
	for _, p := range doomed {
		ids[p.Name] = true
	}
	var ends map[string]int
	require.Eventually(t, func() bool {
		ends = countStored(t, e, ids).ends
		return len(ends) == 2*deleted
	}, 2*time.Minute, time.Second, "end lines of the deleted Pods: %v", ends)
	for _, p := range doomed {
		for _, s := range []string{"stdout", "stderr"} {
			ws = append(ws, loggen{name: p.Name, streams: []string{s}, lines: ends[p.Name+" "+s]})
		}
	}
	a, _ := waitAccount(t, e, ws, 2*time.Minute)
	var described []string
	for k, n := range ends {
		described = append(described, fmt.Sprintf("%s %d", k, n))
	}
	t.Logf("%d Pods of about a second, %d deleted while logging (%s): %s", short, deleted, strings.Join(described, ", "), a)
	assert.Zero(t, a.missing, "lines lost")
	assert.Zero(t, a.duplicates, "lines repeated")
}
