// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Workload shapes of the log scenarios. 800 lines of 250 bytes a second per Pod (about
// 230 KB/s with the CRI prefix) make the kubelet (1 MiB, checked every 3 s) rotate each Pod's
// 0.log every four to five seconds.
const (
	steadyRate = 800
	lineSize   = 250
)

func steadyPods(prefix string, pods, seconds int) ([]*corev1.Pod, []loggen) {
	var ps []*corev1.Pod
	var ws []loggen
	perStream := steadyRate / 2 * seconds
	for i := range pods {
		name := fmt.Sprintf("%s-%d", prefix, i)
		ps = append(ps, loggenPod(name, steadyRate, lineSize, perStream))
		ws = append(ws, loggen{name: name, streams: []string{"stdout", "stderr"}, lines: perStream})
	}
	return ps, ws
}

// rotations counts the rotated files the kubelet made for the Pods (0.log.<time>, plain or
// gzip'd) that are still there.
func rotations(ws []loggen) int {
	n := 0
	for _, w := range ws {
		files, _ := filepath.Glob(filepath.Join("/var/log/pods", workNamespace+"_"+w.name+"_*", "loggen", "0.log.*"))
		n += len(files)
	}
	return n
}

// TestSteadyLoadWithRotation (scenario 1): several Pods log at rates that make the real
// kubelet rotate every few seconds; every line arrives once, each container's lines in one
// stream of its namespace's group (the shipped groupBy).
func TestSteadyLoadWithRotation(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	pods, ws := steadyPods("steady", 4, 30)
	began := time.Now()
	runPods(t, e, pods, ws, 3*time.Minute)
	rotated := rotations(ws)
	a, tl := waitAccount(t, e, ws, 2*time.Minute)
	t.Logf("%d Pods, %v of writing, %d rotated files left by the kubelet; %s; all arrived %v after the first line",
		len(ws), time.Since(began).Round(time.Second), rotated, a, time.Since(began).Round(time.Second))
	assert.Positive(t, rotated, "the kubelet rotated")
	assert.Zero(t, a.missing, "lines lost")
	assert.Zero(t, a.duplicates, "lines repeated without any restart")
	for key, where := range tl.streams {
		assert.Len(t, where, 1, "%s arrived in more than one stream: %v", key, sortedKeys(where))
		for w := range where {
			group := strings.Fields(w)[0]
			assert.True(t, strings.HasSuffix(group, "/"+workNamespace), "%s arrived outside its namespace's group: %s", key, w)
		}
	}
}

// agentPod returns the running node agent Pod.
func agentPod(t *testing.T, e *env) *corev1.Pod {
	t.Helper()
	p, err := findAgentPod(e)
	require.NoError(t, err)
	return p
}

// findAgentPod waits up to two minutes for a Ready node agent Pod (for goroutines other than
// the test's: it returns an error instead of failing the test).
func findAgentPod(e *env) (*corev1.Pod, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		list, err := e.node.Client.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + release + "-node"})
		if err == nil {
			for i := range list.Items {
				if p := &list.Items[i]; p.DeletionTimestamp == nil && podReady(p) {
					return p, nil
				}
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no Ready node agent Pod (last error: %w)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// agentProcess returns the pid of the node agent's process (its binary is /otelcol-k8s-node in
// the image; with hostNetwork its process is one of the host's).
func agentProcess(t *testing.T) int {
	t.Helper()
	pid, err := findAgentProcess()
	require.NoError(t, err)
	return pid
}

// findAgentProcess waits up to a minute for the node agent's process (for goroutines other
// than the test's).
func findAgentProcess() (int, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err == nil && strings.HasPrefix(string(b), "/otelcol-k8s-node\x00") {
				return strconv.Atoi(filepath.Base(filepath.Dir(p)))
			}
		}
		if time.Now().After(deadline) {
			return 0, errors.New("no node agent process")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Duplicates a kill may cause, by the documented bound (receiver/crilogreceiver/README.md):
// the records accepted within one checkpoint interval (1 s) plus one poll (256 KiB) per file.
func duplicateBound(kills, rate, files, lineBytes int) int {
	return kills * (rate + files*(256<<10)/lineBytes)
}

// TestAgentKilled (scenario 2): mid-load the node agent's Pod is deleted with grace period 0
// (kubectl delete --grace-period=0 --force) and later its container's process is killed with
// SIGKILL; the DaemonSet controller and the kubelet bring it back on the same host state.
// Nothing is lost; duplicates stay within the documented bound.
func TestAgentKilled(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	const seconds = 40
	pods, ws := steadyPods("killed", 2, seconds)
	first := agentPod(t, e)
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(10 * time.Second)
		zero := int64(0)
		if err := e.node.Client.CoreV1().Pods(namespace).Delete(context.Background(), first.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Errorf("force delete: %v", err)
		}
		time.Sleep(12 * time.Second)
		second, err := findAgentPod(e)
		if err != nil {
			t.Error(err)
			return
		}
		if second.UID == first.UID {
			t.Errorf("the DaemonSet did not replace the deleted Pod")
		}
		pid, err := findAgentProcess()
		if err != nil {
			t.Error(err)
			return
		}
		t.Logf("SIGKILL to the agent's process %d in Pod %s", pid, second.Name)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Errorf("kill: %v", err)
		}
	}()
	began := time.Now()
	runPods(t, e, pods, ws, 3*time.Minute)
	<-done
	a, tl := waitAccount(t, e, ws, 3*time.Minute)
	files := len(ws) * 2 * 3 // Pods x streams' files: 0.log and two rotated ones at most
	bound := duplicateBound(2, steadyRate*len(ws), files, lineSize)
	t.Logf("after a force delete and a SIGKILL: %s (bound %d) in %v", a, bound, time.Since(began).Round(time.Second))
	assert.Zero(t, a.missing, "lines lost")
	assert.LessOrEqual(t, a.duplicates, bound, "duplicates beyond the documented bound")
	for key, where := range tl.streams {
		assert.Len(t, where, 1, "%s arrived in more than one stream across restarts: %v", key, sortedKeys(where))
	}
	restarted := agentPod(t, e)
	var restarts int32
	for _, c := range restarted.Status.ContainerStatuses {
		restarts += c.RestartCount
	}
	assert.Positive(t, restarts, "the kubelet restarted the killed container")
}

// TestNodesTheAgentMustNotTarget (scenario 7): a Node labeled kubernetes.io/os: windows and
// one labeled eks.amazonaws.com/compute-type: fargate, registered through the API before the
// chart was installed (no kubelet behind them; see setUp), get no node agent: `helm install
// --wait` completed, and the DaemonSet wants and has exactly the real node's Pod.
func TestNodesTheAgentMustNotTarget(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	ctx := context.Background()
	for _, n := range foreignNodes() {
		_, err := e.node.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		require.NoError(t, err, "Node %s is registered", n.Name)
	}
	ds, err := e.node.Client.AppsV1().DaemonSets(namespace).Get(ctx, release+"-node", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, ds.Generation, ds.Status.ObservedGeneration)
	assert.Equal(t, int32(1), ds.Status.DesiredNumberScheduled, "the DaemonSet wants a Pod only on the real node")
	assert.Equal(t, int32(1), ds.Status.NumberReady)
	pods, err := e.node.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + release + "-node"})
	require.NoError(t, err)
	for _, p := range pods.Items {
		assert.NotContains(t, []string{"windows-node", "fargate-node"}, p.Spec.NodeName, "agent Pod %s placed on a Node it must not target", p.Name)
	}
}
