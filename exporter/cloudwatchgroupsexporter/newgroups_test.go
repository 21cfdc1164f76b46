// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// TestNewGroupsKeepPace catches up a backlog whose log groups are all new (design.md,
// section 7, "a wait before looking again never takes the last free sender"), against the
// local server through the SDK: 32 streams in 16 new groups (two pods per namespace), read in
// turns of a little more than a batch, 2 senders, a 1 s initial_interval (each new group's
// wait a random part of it). Through an unbounded queue every group is routed at once and the
// waits run side by side, in the background; through a queue of eight reads the reader meets
// the groups a few at a time, and before the rule both senders slept in each group's wait in
// turn (about 16 x 0.5 s on top). The small queue may cost at most 1.5 times the unbounded
// run's time.
func TestNewGroupsKeepPace(t *testing.T) {
	const (
		streams = 32
		rounds  = 3
		records = 300 // about 280 KiB per read: a little more than a 256 KiB batch
		batch   = 256 << 10
		small   = 2 << 20
	)
	chunks := func(run int) []plog.Logs {
		out := make([]plog.Logs, 0, streams*rounds)
		for r := range rounds {
			for s := range streams {
				ld := backlogChunk(s, r, records)
				ns := fmt.Sprintf("run%d-ns%02d", run, s/2)
				ld.ResourceLogs().At(0).Resource().Attributes().PutStr("k8s.namespace.name", ns)
				out = append(out, ld)
			}
		}
		return out
	}
	run := func(t *testing.T, b *backend, n int, queueSize int64) (time.Duration, localStats) {
		t.Helper()
		cfg := testConfig(b.endpoint)
		cfg.RetentionDays = 0
		cfg.Tags = nil
		cfg.ApplySettingsToExistingGroups = false
		cfg.Hostname = "node-1"
		cfg.BackOffConfig.InitialInterval = time.Second
		cfg.BackOffConfig.MaxInterval = 2 * time.Second
		backlogQueue(cfg, queueSize, batch)
		before := b.local.Stats()
		exp := newTestExporter(t, cfg, component.NewIDWithName(metadata.Type, fmt.Sprintf("run%d", n)), nil)
		data := chunks(n)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		for _, ld := range data {
			require.NoError(t, exp.ConsumeLogs(ctx, ld))
		}
		require.NoError(t, exp.Shutdown(context.Background())) // sends the last partial batches
		took := time.Since(start)
		after := b.local.Stats()
		require.Equal(t, int64(streams*rounds*records), after.EventsAccepted-before.EventsAccepted)
		after.Requests["CreateLogGroup"] -= before.Requests["CreateLogGroup"]
		after.QuotaThrottles -= before.QuotaThrottles
		return took, after
	}
	awsEnv(t)
	b := startLocal(t, localConfig{})
	// Two alternating pairs, the faster run of each kind compared: the waits are random, and a
	// loaded machine slows one run more than another.
	const pairs = 2
	var free, bounded time.Duration
	for i := range pairs {
		f, freeStats := run(t, b, 2*i, 1<<30)
		bd, boundedStats := run(t, b, 2*i+1, small)
		t.Logf("unbounded %v, queue of %d KiB %v (%.2fx); CreateLogGroup %d and %d, quota throttles %d and %d", f, small>>10, bd,
			bd.Seconds()/f.Seconds(), freeStats.Requests["CreateLogGroup"], boundedStats.Requests["CreateLogGroup"],
			freeStats.QuotaThrottles, boundedStats.QuotaThrottles)
		// Each group is created once; a call CloudWatch's quota (5 per second) refused is retried.
		for _, st := range []localStats{freeStats, boundedStats} {
			assert.LessOrEqual(t, st.Requests["CreateLogGroup"], int64(streams/2)+st.QuotaThrottles)
		}
		if i == 0 || f < free {
			free = f
		}
		if i == 0 || bd < bounded {
			bounded = bd
		}
	}
	require.Len(t, b.local.Groups(), 2*pairs*streams/2) // 16 groups per run
	assert.LessOrEqual(t, bounded.Seconds(), 1.5*free.Seconds(), "new groups slowed the small queue down (best of %d: %v against %v)", pairs, bounded, free)
}
