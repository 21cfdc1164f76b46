// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroups

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// TestFleetStartControlPlane starts 200 nodes at once against the local server with AWS's
// quotas, all writing to the same two new groups with retention and tags configured. Group
// settings come only from the process that created a group, so the settings calls stay a
// handful instead of one round per node and group, and no node's send fails or waits for them.
func TestFleetStartControlPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("200 nodes")
	}
	awsEnv(t)
	b := startLocal(t, localcloudwatch.Config{Quotas: localcloudwatch.AWSQuotas()})
	const nodes = 200
	sources := []source{{namespace: "shop", pod: "web", container: "c"}, {namespace: "billing", pod: "api", container: "c"}}

	exps := make([]*cwExporter, nodes)
	for i := range exps {
		cfg := testConfig(b.endpoint)
		cfg.Hostname = fmt.Sprintf("node-%03d", i)
		cfg.ApplySettingsToExistingGroups = false // the DaemonSet default: settings from the creator only
		cfg.BackOffConfig.InitialInterval = 50 * time.Millisecond
		cfg.BackOffConfig.MaxInterval = time.Second
		exps[i], _ = startExporter(t, cfg, nil)
		t.Cleanup(exps[i].stopRetries)
	}
	var wg sync.WaitGroup
	errs := make([]error, nodes)
	for i, e := range exps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.push(context.Background(), makeLogs(sources, 5, time.Now(), fmt.Sprintf("node-%03d", i)))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "node %d", i)
	}
	require.Len(t, b.storedEvents(t), nodes*len(sources)*5)

	// Background settings of the creators finish (retention on both groups).
	require.Eventually(t, func() bool {
		for _, ns := range []string{"shop", "billing"} {
			g, ok := b.local.Group("it.namespace/" + ns)
			if !ok || g.RetentionDays != 7 {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond)
	req := b.local.Stats().Requests
	settings := req["DescribeLogGroups"] + req["PutRetentionPolicy"] + req["TagResource"] + req["ListTagsForResource"] + req["AssociateKmsKey"]
	t.Logf("control plane: CreateLogGroup %d, CreateLogStream %d, settings calls %d (%v)",
		req["CreateLogGroup"], req["CreateLogStream"], settings, req)
	require.LessOrEqual(t, settings, int64(20), "settings calls: a few per group, not one round per node and group")
}
