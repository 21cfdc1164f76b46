// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/install"
)

// upgrade runs `helm upgrade` of the release with over merged into the tests' values, and
// waits for the workloads.
func upgrade(t *testing.T, e *env, over map[string]any) {
	t.Helper()
	ch, err := loader.Load(filepath.Join(root, install.ChartDir))
	require.NoError(t, err)
	vals := e.values()
	for k, v := range over {
		if m, ok := v.(map[string]any); ok {
			if base, ok := vals[k].(map[string]any); ok {
				merged := maps.Clone(base)
				maps.Copy(merged, m)
				vals[k] = merged
				continue
			}
		}
		vals[k] = v
	}
	up := action.NewUpgrade(e.helm)
	up.Namespace, up.Wait, up.Timeout = namespace, true, 3*time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, err = up.RunWithContext(ctx, release, ch, vals)
	require.NoError(t, err, "helm upgrade")
}

// TestUpgradeReachesExistingGroups (scenario 6): groups written before a `helm upgrade` that
// changes retention and tags get the new settings once the upgraded collectors write to them
// again (apply_settings_to_existing_groups: once per group and process start); lines written
// before and after arrive, none lost.
func TestUpgradeReachesExistingGroups(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	pods, ws := steadyPods("upgrade", 1, 10)
	runPods(t, e, pods, ws, 2*time.Minute)
	a, _ := waitAccount(t, e, ws, time.Minute)
	require.Zero(t, a.missing, "before the upgrade: %s", a)
	before := map[string]bool{}
	for _, g := range e.srv.Groups() {
		before[g.Name] = true
	}
	require.NotEmpty(t, before)

	first := agentPod(t, e)
	upgrade(t, e, map[string]any{"logGroups": map[string]any{"retentionDays": 7, "tags": map[string]any{"team": "logs", "tier": "node"}}})
	assert.NotEqual(t, first.UID, agentPod(t, e).UID, "the configuration change rolled the agent")
	upgraded := map[string]int64{} // events per group when only the upgraded collectors run
	for _, g := range e.srv.Groups() {
		upgraded[g.Name] = g.Events
	}

	// Lines written after the upgrade: the collector uses the groups again, and a group it
	// uses is brought in line with the settings once per process start.
	more, mws := steadyPods("upgraded", 1, 10)
	runPods(t, e, more, mws, 2*time.Minute)
	a, _ = waitAccount(t, e, append(ws, mws...), time.Minute)
	assert.Zero(t, a.missing, "lines lost across the upgrade")
	assert.LessOrEqual(t, a.duplicates, duplicateBound(1, steadyRate, 6, lineSize), "duplicates across the upgrade's restart")

	var stale []string
	require.Eventually(t, func() bool {
		stale = stale[:0]
		for _, g := range e.srv.Groups() {
			if before[g.Name] && g.Events > upgraded[g.Name] && (g.RetentionDays != 7 || g.Tags["team"] != "logs" || g.Tags["tier"] != "node") {
				stale = append(stale, fmt.Sprintf("%s (retention %d, tags %v)", g.Name, g.RetentionDays, g.Tags))
			}
		}
		return len(stale) == 0
	}, 2*time.Minute, time.Second, "groups written before and after the upgrade without its retention and tags: %v", stale)
	workGroup := ""
	for _, g := range e.srv.Groups() {
		if strings.HasSuffix(g.Name, "/"+workNamespace) && !strings.Contains(g.Name, "-events") {
			workGroup = g.Name
			assert.Equal(t, int32(7), g.RetentionDays, "the workloads' group")
		}
	}
	assert.True(t, before[workGroup], "the workloads' group %q existed before the upgrade", workGroup)
	var names []string
	for _, g := range e.srv.Groups() {
		names = append(names, fmt.Sprintf("%s (retention %d, tags %v)", g.Name, g.RetentionDays, g.Tags))
	}
	t.Logf("after the upgrade: %s; groups: %s", a, strings.Join(names, "; "))
}

// checkUninstalled checks, after `helm uninstall`, that nothing of the release is left in its
// namespace: no object the chart made and none a collector made at run time (its checkpoint
// and Leases are the chart's own, so the uninstall removes them).
func checkUninstalled(e *env) error {
	ctx := context.Background()
	cs := e.node.Client
	sel := metav1.ListOptions{}
	var left []string
	if cms, err := cs.CoreV1().ConfigMaps(namespace).List(ctx, sel); err == nil {
		for _, c := range cms.Items {
			if c.Name != "kube-root-ca.crt" {
				left = append(left, "ConfigMap "+c.Name)
			}
		}
	}
	if ls, err := cs.CoordinationV1().Leases(namespace).List(ctx, sel); err == nil {
		for _, l := range ls.Items {
			left = append(left, "Lease "+l.Name)
		}
	}
	if sas, err := cs.CoreV1().ServiceAccounts(namespace).List(ctx, sel); err == nil {
		for _, s := range sas.Items {
			if s.Name != "default" {
				left = append(left, "ServiceAccount "+s.Name)
			}
		}
	}
	if crs, err := cs.RbacV1().ClusterRoles().List(ctx, sel); err == nil {
		for _, r := range crs.Items {
			if strings.HasPrefix(r.Name, release) {
				left = append(left, "ClusterRole "+r.Name)
			}
		}
	}
	if secrets, err := cs.CoreV1().Secrets(namespace).List(ctx, sel); err == nil {
		for _, s := range secrets.Items {
			if s.Name != awsSecret {
				left = append(left, "Secret "+s.Name)
			}
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("left after helm uninstall: %v", left)
	}
	return nil
}
