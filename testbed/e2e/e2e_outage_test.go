// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"sync"
	"testing"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

// This file sorts first, so TestServerOutage is the first scenario to start: every scenario
// runs with t.Parallel() and the outage (ten minutes by default, most of it waiting) takes one
// of the -parallel slots while the other scenarios run one after another in the rest.

// TestServerOutage runs the two outages side by side in one -parallel slot (subtests started
// together, not queued behind -parallel): "cloudwatch" takes the local CloudWatch Logs server
// down (connections refused) for -e2e.outage while the node keeps writing, then brings it
// back; "xray" takes the events collector's X-Ray endpoint down for as long while Events keep
// coming (TestEventsThroughXRayOutage's scenario).
func TestServerOutage(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		t.Run("cloudwatch", func(t *testing.T) {
			e := newEnv(t, localcloudwatch.Config{Seed: 7})
			n := steadyNode()
			n.Seed = 7
			n.Phases = []nodesim.Phase{{Duration: *outage + 10*time.Second, LinesPerSecond: 300}}
			run(t, e, scenario{node: n, during: downFor(*outage)})
		})
	}()
	go func() {
		defer wg.Done()
		t.Run("xray", func(t *testing.T) { eventsThroughXRayOutage(t, *outage) })
	}()
	wg.Wait()
}
