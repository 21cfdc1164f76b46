// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTransientAWSAnswersDropNothing sends through the real SDK client to the local server
// answering a share of calls with the errors AWS gives during a rollout or an IAM change:
// every event is stored once and none is rejected.
func TestTransientAWSAnswersDropNothing(t *testing.T) {
	for _, f := range []localFaults{
		{ErrorRate: 0.5, ErrorCode: "OperationAbortedException", Operations: []string{"CreateLogGroup", "CreateLogStream"}},
		{ErrorRate: 0.3, ErrorCode: "AccessDeniedException", Operations: []string{"PutLogEvents"}},
		{ErrorRate: 0.3, ErrorCode: "UnrecognizedClientException"},
		{ErrorRate: 0.3, ErrorCode: "ExpiredTokenException"},
	} {
		t.Run(f.ErrorCode, func(t *testing.T) {
			awsEnv(t)
			b := startLocal(t, localConfig{Seed: 3, Faults: f})
			cfg := testConfig(b.endpoint)
			cfg.BackOffConfig.InitialInterval = 5 * time.Millisecond
			cfg.BackOffConfig.MaxInterval = 20 * time.Millisecond
			e, tel := startExporter(t, cfg, nil)
			t.Cleanup(e.stopRetries)
			require.NoError(t, pushFor(e, mustConvert(t, e, makeLogs(testSources, 50, time.Now(), "n")), time.Minute))
			require.Len(t, b.storedEvents(t), 50*len(testSources))
			_, err := tel.GetMetric("otelcol_exporter_cloudwatch_groups_events_rejected")
			require.Error(t, err, "nothing rejected")
			require.Positive(t, b.local.Stats().InjectedErrors)
		})
	}
}
