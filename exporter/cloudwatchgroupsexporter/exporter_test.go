// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/sender"
)

// failingStreams wraps a real client and fails PutLogEvents for streams containing a marker,
// with a retryable or a permanent error.
type failingStreams struct {
	sender.API
	mu        sync.Mutex
	marker    string
	permanent bool
}

func (f *failingStreams) PutLogEvents(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutLogEventsOutput, error) {
	f.mu.Lock()
	marker, permanent := f.marker, f.permanent
	f.mu.Unlock()
	if marker != "" && strings.Contains(aws.ToString(in.LogStreamName), marker) {
		if permanent {
			return nil, &smithy.GenericAPIError{Code: "InvalidParameterException", Message: "refused"}
		}
		return nil, &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}
	}
	return f.API.PutLogEvents(ctx, in, opts...)
}

// startExporter builds and starts the exporter itself (no exporterhelper around it) with its
// own telemetry, and shuts it down when the test ends; wrap, when set, wraps the real
// CloudWatch Logs client.
func startExporter(t *testing.T, cfg *Config, wrap func(sender.API) sender.API) (*cwExporter, *componenttest.Telemetry) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	e, err := newExporter(cfg, set)
	require.NoError(t, err)
	if wrap != nil {
		e.newAPI = func(ctx context.Context, c *Config) (sender.API, error) {
			real, err := newCloudWatchClient(ctx, c)
			if err != nil {
				return nil, err
			}
			return wrap(real), nil
		}
	}
	require.NoError(t, e.start(context.Background(), componenttest.NewNopHost()))
	// Shutdown is idempotent: a test that shuts the exporter down itself may.
	t.Cleanup(func() { _ = e.shutdown(context.Background()) })
	return e, tel
}

func newPushExporter(t *testing.T, endpoint string, wrap func(sender.API) sender.API) (*cwExporter, *componenttest.Telemetry) {
	t.Helper()
	return startExporter(t, testConfig(endpoint), wrap)
}

// pushFor pushes req with a request timeout (exporterhelper's timeout), which ends the
// sender's retries without spending the retry budget.
func pushFor(e *cwExporter, req xexporterhelper.Request, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return e.pushRequest(ctx, req)
}

// A push whose batches partly fail returns only the failed events: the request's OnError
// hands them back, and retrying them completes the delivery without duplicates.
func TestPushReturnsOnlyUndeliveredRecords(t *testing.T) {
	awsEnv(t)
	b := startLocal(t, localConfig{})
	fail := &failingStreams{marker: "web-2"}
	e, tel := newPushExporter(t, b.endpoint, func(real sender.API) sender.API { fail.API = real; return fail })

	req, err := e.convert(context.Background(), makeLogs(testSources, 100, time.Now(), "node-1"))
	require.NoError(t, err)
	err = pushFor(e, req, 2*time.Second)
	require.Error(t, err)
	assert.False(t, consumererror.IsPermanent(err))
	retry := req.(*eventsRequest).OnError(err).(*eventsRequest)
	require.Equal(t, 100, retry.ItemsCount(), "only the events of the failing stream come back")
	require.Len(t, retry.streams, 1)
	assert.Contains(t, retry.streams[0].id.stream, "web-2")

	fail.mu.Lock()
	fail.marker = ""
	fail.mu.Unlock()
	require.NoError(t, e.pushRequest(context.Background(), retry))

	assert.Len(t, b.storedEvents(t), 100*len(testSources))
	m, err := tel.GetMetric("otelcol_exporter_cloudwatch_groups_throttles")
	require.NoError(t, err)
	assert.Positive(t, sumOf(m))
}

// When retry_on_failure.max_elapsed_time is spent, the undelivered events are dropped, counted
// as rejected with reason retries_exhausted, and the error is permanent.
func TestRetriesExhaustedAreCounted(t *testing.T) {
	awsEnv(t)
	b := startLocal(t, localConfig{})
	fail := &failingStreams{marker: "web-2"}
	cfg := testConfig(b.endpoint)
	cfg.BackOffConfig.MaxElapsedTime = 200 * time.Millisecond
	e, tel := startExporter(t, cfg, func(real sender.API) sender.API { fail.API = real; return fail })

	req, err := e.convert(context.Background(), makeLogs(testSources, 100, time.Now(), "node-1"))
	require.NoError(t, err)
	err = e.pushRequest(context.Background(), req)
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err))
	m, err := tel.GetMetric("otelcol_exporter_cloudwatch_groups_events_rejected")
	require.NoError(t, err)
	got := int64(0)
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if v, _ := dp.Attributes.Value("reason"); v.AsString() == "retries_exhausted" {
			got += dp.Value
		}
	}
	assert.Equal(t, int64(100), got)
}

// A permanent error drops the batch, counts it as rejected and does not fail the push.
func TestPushPermanentErrorIsCountedNotRetried(t *testing.T) {
	awsEnv(t)
	b := startLocal(t, localConfig{})
	fail := &failingStreams{marker: "billing", permanent: true}
	e, tel := newPushExporter(t, b.endpoint, func(real sender.API) sender.API { fail.API = real; return fail })

	require.NoError(t, e.push(context.Background(), makeLogs(testSources, 50, time.Now(), "node-1")))
	assertCounter(t, tel, "otelcol_exporter_cloudwatch_groups_events_rejected", 50)
	assertCounter(t, tel, "otelcol_exporter_cloudwatch_groups_events_sent", int64(50*(len(testSources)-1)))
}

// Oversized events are truncated or split to the configured size, and the local server,
// which enforces every PutLogEvents limit, accepts every batch.
func TestOversizeAgainstLocalServer(t *testing.T) {
	for _, mode := range []Oversize{OversizeTruncate, OversizeSplit} {
		t.Run(string(mode), func(t *testing.T) {
			awsEnv(t)
			b := startLocal(t, localConfig{})
			cfg := testConfig(b.endpoint)
			cfg.MessageFormat = "raw"
			cfg.Oversize = mode
			e, tel := startExporter(t, cfg, nil)

			ld := plog.NewLogs()
			rl := ld.ResourceLogs().AppendEmpty()
			rl.Resource().Attributes().PutStr("log.file.path", "/var/log/pods/shop_big_1/c/0.log")
			rl.Resource().Attributes().PutStr("k8s.namespace.name", "shop")
			lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
			big := strings.Repeat("0123456789", 250_000) // 2.5 MB
			for i := range 3 {
				r := lrs.AppendEmpty()
				if i == 1 {
					r.Body().SetStr(big)
				} else {
					r.Body().SetStr("small")
				}
			}
			require.NoError(t, e.push(context.Background(), ld))

			events, err := b.local.Events("it.namespace/shop", e.router.Route(ld.ResourceLogs().At(0).Resource().Attributes(), lrs.At(0).Attributes()).Stream)
			require.NoError(t, err)
			stored := 0
			for _, ev := range events {
				require.LessOrEqual(t, len(ev.Message), cfg.MaxEventBytes)
				stored += len(ev.Message)
			}
			if mode == "split" {
				require.Len(t, events, 2+3) // 2.5 MB in pieces of at most 1,048,550 bytes
				assert.Equal(t, len(big)+len("small")*2, stored)
			} else {
				require.Len(t, events, 3)
				truncated := 0
				for _, ev := range events { // batches travel in parallel: any arrival order
					if strings.HasSuffix(ev.Message, "…[truncated]") {
						truncated++
						assert.Len(t, ev.Message, cfg.MaxEventBytes)
					}
				}
				assert.Equal(t, 1, truncated)
			}
			assertCounter(t, tel, "otelcol_exporter_cloudwatch_groups_events_resized", 1)
		})
	}
}

// Settings reach existing groups too: KMS key associated, retention and tags put, and a class
// that cannot change is reported.
func TestGroupSettingsOnExistingGroupLocal(t *testing.T) {
	awsEnv(t)
	b := startLocal(t, localConfig{})
	ctx := context.Background()
	_, err := b.client().CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{
		LogGroupName: aws.String("it.application"), LogGroupClass: "STANDARD",
	})
	require.NoError(t, err)

	const key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	cfg := testConfig(b.endpoint)
	cfg.GroupBy = "log_type"
	cfg.KMSKeyID = key
	cfg.LogGroupClass = "INFREQUENT_ACCESS"
	cfg.ApplySettingsToExistingGroups = true
	e, tel := startExporter(t, cfg, nil)
	t.Cleanup(e.stopRetries)
	src := []source{{namespace: "shop", pod: "a", container: "c"}, {path: "/var/log/kube-apiserver/audit.log"}}
	require.NoError(t, e.push(ctx, makeLogs(src, 10, time.Now(), "n")))
	require.NoError(t, e.push(ctx, makeLogs(src, 10, time.Now(), "n"))) // settings once per process

	// Settings are applied in the background, never on the send path.
	require.Eventually(t, func() bool {
		m, err := tel.GetMetric("otelcol_exporter_cloudwatch_groups_group_settings")
		return err == nil && sumOf(m) >= 3
	}, 10*time.Second, 10*time.Millisecond, "applied twice, one class mismatch")
	existing, ok := b.local.Group("it.application")
	require.True(t, ok)
	assert.Equal(t, key, existing.KMSKeyID)
	assert.Equal(t, int32(7), existing.RetentionDays)
	assert.Equal(t, cfg.Tags, existing.Tags)
	assert.Equal(t, "STANDARD", existing.Class)
	created, ok := b.local.Group("it.audit")
	require.True(t, ok)
	assert.Equal(t, key, created.KMSKeyID)
	assert.Equal(t, "INFREQUENT_ACCESS", created.Class)
	assert.Equal(t, int32(7), created.RetentionDays)

	st := b.local.Stats()
	assert.Equal(t, int64(1+1), st.Requests["CreateLogGroup"], "the test's own, then only the missing group")
	assert.Equal(t, int64(1), st.Requests["AssociateKmsKey"])
}

// moto has no AssociateKmsKey: applying settings to an existing group fails. Sending goes on,
// the failure is counted once and not repeated for every batch.
func TestSettingsFailureDoesNotBlockSending(t *testing.T) {
	awsEnv(t)
	b := startMoto(t)
	_, err := b.client().CreateLogGroup(context.Background(), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("it.namespace/shop")})
	require.NoError(t, err)
	cfg := testConfig(b.endpoint)
	cfg.KMSKeyID = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	cfg.ApplySettingsToExistingGroups = true
	e, tel := startExporter(t, cfg, nil)
	t.Cleanup(e.stopRetries)

	for range 2 {
		require.NoError(t, e.push(context.Background(), makeLogs(testSources[:2], 20, time.Now(), "n")))
	}
	assertCounter(t, tel, "otelcol_exporter_cloudwatch_groups_events_sent", 80)
	failed := func() int64 {
		m, err := tel.GetMetric("otelcol_exporter_cloudwatch_groups_group_settings")
		if err != nil {
			return 0
		}
		n := int64(0)
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			if v, _ := dp.Attributes.Value("outcome"); v.AsString() == "failed" {
				n += dp.Value
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return failed() >= 1 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, int64(1), failed(), "one failed attempt, then a pause")
}
