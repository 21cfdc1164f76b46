// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// downFor returns a scenario's faults: four seconds in, the local server goes down (connections
// refused) for d, then comes back.
func downFor(d time.Duration) func(context.Context, *env) {
	return func(ctx context.Context, e *env) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(4 * time.Second):
		}
		set(e, localcloudwatch.Faults{Down: true})
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
		set(e, localcloudwatch.Faults{})
	}
}
