// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// openPodLogs lists the files under /var/log/pods that process pid holds open.
func openPodLogs(pid int) []string {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	var out []string
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && strings.HasPrefix(target, "/var/log/pods/") {
			out = append(out, target)
		}
	}
	return out
}

// TestPodOptOut: a Pod annotated otelcol-k8s.io/exclude: "true" logs beside one that is not;
// the agent, as the chart runs it, never opens the opted-out Pod's files and exports none of
// its lines, while every line of the other arrives once.
func TestPodOptOut(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	const lines = 4000
	out := loggenPod("optout", 400, lineSize, lines/2)
	out.Annotations = map[string]string{"otelcol-k8s.io/exclude": "true"}
	in := loggenPod("optin", 400, lineSize, lines/2)
	pid := agentProcess(t)
	stop := make(chan struct{})
	opened := make(chan []string, 1)
	go func() { // every file the agent opens while both Pods log
		seen := map[string]bool{}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, f := range openPodLogs(pid) {
				seen[f] = true
			}
			select {
			case <-stop:
				var all []string
				for f := range seen {
					all = append(all, f)
				}
				opened <- all
				return
			case <-tick.C:
			}
		}
	}()
	ws := []loggen{
		{name: "optout", streams: []string{"stdout", "stderr"}, lines: lines / 2},
		{name: "optin", streams: []string{"stdout", "stderr"}, lines: lines / 2},
	}
	runPods(t, e, []*corev1.Pod{out, in}, ws, 2*time.Minute)
	a, tl := waitAccount(t, e, ws[1:], time.Minute)
	close(stop)
	files := <-opened
	require.Equal(t, pid, agentProcess(t), "the agent restarted")
	optedOut := countStored(t, e, map[string]bool{"optout": true})
	t.Logf("opted-in Pod: %s; opted-out Pod: %d lines stored; files the agent held open: %v", a, optedOut.stored, files)
	assert.Zero(t, a.missing, "lines of the opted-in Pod lost")
	assert.Zero(t, a.duplicates)
	assert.Zero(t, optedOut.stored, "lines of the opted-out Pod exported")
	assert.NotEmpty(t, tl.streams, "the opted-in Pod's lines")
	sawIn := false
	for _, f := range files {
		assert.NotContains(t, f, workNamespace+"_optout_", "the agent opened an opted-out Pod's file")
		sawIn = sawIn || strings.Contains(f, workNamespace+"_optin_")
	}
	assert.True(t, sawIn, "the agent's open files were seen at all (the opted-in Pod's)")
}

// TestNamespaceExclude: `helm upgrade` with logs.namespaces.exclude leaves the matching
// namespaces' Pods unread (their files never opened, none of their lines exported) while other
// namespaces' lines keep arriving; the upgrade back reads them again from then on.
func TestNamespaceExclude(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	ctx := context.Background()
	const quiet = "quiet-1"
	_, err := e.node.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: quiet}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.node.Client.CoreV1().Namespaces().Delete(ctx, quiet, metav1.DeleteOptions{}) })
	upgrade(t, e, map[string]any{"logs": map[string]any{"namespaces": map[string]any{"exclude": []any{"quiet-*"}}}})
	t.Cleanup(func() { upgrade(t, e, map[string]any{}) })

	pid := agentProcess(t)
	hushed := loggenPod("hushed", 400, lineSize, 1000)
	hushed.Namespace = quiet
	heard := loggenPod("heard", 400, lineSize, 1000)
	_, err = e.node.Client.CoreV1().Pods(quiet).Create(ctx, hushed, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { deletePods(t, e, []*corev1.Pod{hushed}) })
	ws := []loggen{{name: "heard", streams: []string{"stdout", "stderr"}, lines: 1000}}
	runPods(t, e, []*corev1.Pod{heard}, ws, 2*time.Minute)
	a, _ := waitAccount(t, e, ws, time.Minute)
	files := openPodLogs(pid)
	require.Equal(t, pid, agentProcess(t), "the agent restarted")
	stored := countStored(t, e, map[string]bool{"hushed": true})
	t.Logf("namespace %s excluded: %d of its lines stored; the other namespace's Pod: %s; open files %v", quiet, stored.stored, a, files)
	assert.Zero(t, a.missing)
	assert.Zero(t, stored.stored, "lines of an excluded namespace exported")
	for _, f := range files {
		assert.NotContains(t, f, quiet+"_hushed_", "the agent opened a file of an excluded namespace")
	}
}
