// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
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

// credentialFailures are the answers CloudWatch Logs gives while credentials are wrong or
// being refreshed (an expired session token, an IRSA token STS has not exchanged yet, an IAM
// policy change still propagating), each for a while, in turn.
var credentialFailures = []string{"ExpiredTokenException", "UnrecognizedClientException", "AccessDeniedException"}

// TestCredentialsFailure: for 18 seconds every CloudWatch call is refused with a credentials
// error (six seconds each of credentialFailures) while the node keeps writing, with the
// DaemonSet's exporter settings. The answers come before anything is stored, so the accounting
// is exact: every line once, none dropped as a permanent 400.
func TestCredentialsFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localcloudwatch.Config{Seed: 10})
	n := steadyNode()
	n.Seed = 10
	n.Phases = []nodesim.Phase{{Duration: 25 * time.Second, LinesPerSecond: 500}}
	run(t, e, scenario{node: n, during: func(ctx context.Context, e *env) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(3 * time.Second):
		}
		for _, code := range credentialFailures {
			set(e, localcloudwatch.Faults{ErrorRate: 1, ErrorCode: code})
			select {
			case <-ctx.Done():
			case <-time.After(6 * time.Second):
			}
		}
		set(e, localcloudwatch.Faults{})
	}})
	st := e.srv.Stats()
	if st.InjectedErrors == 0 {
		t.Error("no credentials error was answered")
	}
	t.Logf("credentials errors answered: %d", st.InjectedErrors)
}
