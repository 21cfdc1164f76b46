// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/batching"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// source is one log file on a node.
type source struct {
	namespace, pod, container string
	path                      string // set for non-pod files (audit, journal)
}

func (s source) filePath() string {
	if s.path != "" {
		return s.path
	}
	return fmt.Sprintf("/var/log/pods/%s_%s_uid-%s/%s/0.log", s.namespace, s.pod, s.pod, s.container)
}

// makeLogs builds n records per source, bodies "<file>#<i>", timestamps one second apart
// ending at end. Each source is its own resource, as a file log receiver emits them.
func makeLogs(sources []source, n int, end time.Time, host string) plog.Logs {
	ld := plog.NewLogs()
	for _, s := range sources {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("host.name", host)
		rl.Resource().Attributes().PutStr("log.file.path", s.filePath())
		if s.namespace != "" {
			rl.Resource().Attributes().PutStr("k8s.namespace.name", s.namespace)
			rl.Resource().Attributes().PutStr("k8s.pod.name", s.pod)
			rl.Resource().Attributes().PutStr("k8s.container.name", s.container)
		}
		lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
		for i := range n {
			rec := lrs.AppendEmpty()
			rec.SetTimestamp(pcommon.NewTimestampFromTime(end.Add(time.Duration(i-n) * time.Second)))
			rec.SetSeverityNumber(plog.SeverityNumberInfo)
			rec.Body().SetStr(fmt.Sprintf("%s#%d", s.filePath(), i))
			rec.Attributes().PutStr("log.iostream", "stdout")
		}
	}
	return ld
}

var testSources = []source{
	{namespace: "shop", pod: "web-1", container: "web"},
	{namespace: "shop", pod: "web-2", container: "web"},
	{namespace: "billing", pod: "api-1", container: "api"},
	{namespace: "kube-system", pod: "coredns-1", container: "coredns"},
	{path: "/var/log/kube-apiserver/audit.log"},
	{path: "/var/log/journal/0123/system.journal"},
}

func streamName(host string, s source) string {
	return host + s.filePath()
}

// testConfig returns the exporter configuration the integration tests share.
func testConfig(endpoint string) *Config {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Endpoint = endpoint
	cfg.Region = "us-east-1"
	cfg.GroupBy = "namespace_name"
	cfg.GroupPrefix = "it"
	cfg.RetentionDays = 7
	cfg.ApplySettingsToExistingGroups = true
	cfg.Tags = map[string]string{"team": "platform", "env": "test"}
	cfg.BackOffConfig.InitialInterval = 20 * time.Millisecond
	cfg.BackOffConfig.MaxInterval = 200 * time.Millisecond
	q := cfg.QueueConfig.Get()
	q.Batch.Get().FlushTimeout = 100 * time.Millisecond
	return cfg
}

func newTestExporter(t *testing.T, cfg *Config, id component.ID, host component.Host) exporter.Logs {
	t.Helper()
	set := exportertest.NewNopSettings(metadata.Type)
	set.ID = id
	exp, err := NewFactory().CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), host))
	return exp
}

// TestIntegration sends the same logs to moto and to the local server and checks groups,
// retention, tags, streams and every event through the public API.
func TestIntegration(t *testing.T) {
	for _, start := range []func(*testing.T) *backend{
		startMoto,
		func(t *testing.T) *backend { return startLocal(t, localConfig{}) },
	} {
		awsEnv(t)
		b := start(t)
		t.Run(b.name, func(t *testing.T) { runIntegration(t, b) })
	}
}

func runIntegration(t *testing.T, b *backend) {
	ctx := context.Background()
	const host = "node-1"
	const perSource = 1500

	// An existing group with other settings: the exporter must bring it in line.
	_, err := b.client().CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("it.namespace/shop")})
	require.NoError(t, err)
	_, err = b.client().PutRetentionPolicy(ctx, &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String("it.namespace/shop"), RetentionInDays: aws.Int32(1)})
	require.NoError(t, err)

	now := time.Now()
	ld := makeLogs(testSources, perSource, now, host)
	// Records the exporter must drop client-side: too old and too far ahead.
	extra := ld.ResourceLogs().AppendEmpty()
	extra.Resource().Attributes().PutStr("host.name", host)
	for _, ts := range []time.Time{now.Add(-15 * 24 * time.Hour), now.Add(3 * time.Hour)} {
		rec := extra.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		rec.SetTimestamp(pcommon.NewTimestampFromTime(ts))
		rec.Body().SetStr("out of range")
		extra.Resource().Attributes().PutStr("k8s.namespace.name", "shop")
		extra.Resource().Attributes().PutStr("log.file.path", "/var/log/pods/shop_web-1_uid-web-1/web/0.log")
	}

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	cfg := testConfig(b.endpoint)
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	exp, err := NewFactory().CreateLogs(ctx, set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(ctx, componenttest.NewNopHost()))
	require.NoError(t, exp.ConsumeLogs(ctx, ld))
	// Settings go to the groups in the background, after the first sends.
	require.Eventually(t, func() bool {
		for _, gi := range b.inspect(t) {
			if gi.retention != 7 || len(gi.tags) != len(cfg.Tags) {
				return false
			}
		}
		return true
	}, 20*time.Second, 50*time.Millisecond)
	require.NoError(t, exp.Shutdown(ctx)) // drains the queue

	got := b.inspect(t)
	wantGroups := map[string][]source{
		"it.namespace/shop":    {testSources[0], testSources[1]},
		"it.namespace/billing": {testSources[2]},
		"it.infrastructure":    {testSources[3], testSources[5]},
		"it.audit":             {testSources[4]},
	}
	require.Equal(t, sortedKeys(wantGroups), sortedKeys(got))
	for group, sources := range wantGroups {
		gi := got[group]
		assert.Equal(t, int32(7), gi.retention, "retention of %s", group)
		assert.Equal(t, cfg.Tags, gi.tags, "tags of %s", group)
		var wantStreams []string
		for _, s := range sources {
			wantStreams = append(wantStreams, streamName(host, s))
		}
		require.ElementsMatch(t, wantStreams, sortedKeys(gi.streams), "streams of %s", group)
		assert.Equal(t, perSource*len(sources), gi.filtered, "FilterLogEvents count of %s", group)
		for _, s := range sources {
			events := gi.streams[streamName(host, s)]
			require.Len(t, events, perSource, "events of %s", streamName(host, s))
			for i, ev := range events {
				var msg struct {
					Body       string            `json:"body"`
					Attributes map[string]string `json:"attributes"`
					Resource   map[string]string `json:"resource"`
				}
				require.NoError(t, json.Unmarshal([]byte(aws.ToString(ev.Message)), &msg))
				require.Equal(t, fmt.Sprintf("%s#%d", s.filePath(), i), msg.Body)
				require.Equal(t, s.filePath(), msg.Resource["log.file.path"])
				require.NotEmpty(t, msg.Resource["otelcol_k8s.log.type"], "the routed type, a resource attribute")
				require.NotContains(t, msg.Attributes, "otelcol_k8s.log.type")
				require.Equal(t, host, msg.Resource["host.name"])
				require.Equal(t, now.Add(time.Duration(i-perSource)*time.Second).UnixMilli(), aws.ToInt64(ev.Timestamp))
			}
		}
	}
	assertCounter(t, tel, "otelcol_exporter_cloudwatch_groups_events_sent", int64(perSource*len(testSources)))
	assertCounter(t, tel, "otelcol_exporter_cloudwatch_groups_events_dropped", 2)
	assertCounter(t, tel, "otelcol_exporter_cloudwatch_groups_groups_created", 3)
	assertCounter(t, tel, "otelcol_exporter_cloudwatch_groups_streams_created", int64(len(testSources)))
}

// assertCounter checks the sum of an int counter over all attribute sets.
func assertCounter(t *testing.T, tel *componenttest.Telemetry, name string, want int64) {
	t.Helper()
	m, err := tel.GetMetric(name)
	require.NoError(t, err, name)
	assert.Equal(t, want, sumOf(m), name)
}

// TestQueueDefaultIsBatched guards the defaults the fill ratio depends on.
func TestQueueDefaultIsBatched(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.True(t, cfg.QueueConfig.HasValue())
	b := cfg.QueueConfig.Get().Batch
	require.True(t, b.HasValue())
	assert.Equal(t, exporterhelper.RequestSizerTypeBytes, b.Get().Sizer)
	assert.Equal(t, int64(batching.MaxBatchBytes), b.Get().MinSize, "a stream's batch is one full call")
	assert.Equal(t, int64(batching.MaxBatchBytes), b.Get().MaxSize)
}
