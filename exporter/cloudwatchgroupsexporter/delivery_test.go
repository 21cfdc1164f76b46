// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	zapobserver "go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// statusHost is a component.Host that records the status events reported to it, as the
// collector's service does for the health_check extension.
type statusHost struct {
	mu     sync.Mutex
	events []*componentstatus.Event
}

var _ componentstatus.Reporter = (*statusHost)(nil)

func (*statusHost) GetExtensions() map[component.ID]component.Component { return nil }

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
}

func (h *statusHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []componentstatus.Status
	for _, ev := range h.events {
		out = append(out, ev.Status())
	}
	return out
}

// gaugeValue returns the value of an int gauge without attributes, or -1 when it has none.
func gaugeValue(t *testing.T, tel *componenttest.Telemetry, name string) int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		return -1
	}
	g, ok := m.Data.(metricdata.Gauge[int64])
	if !ok || len(g.DataPoints) != 1 {
		return -1
	}
	return g.DataPoints[0].Value
}

const (
	gaugeFailing  = "otelcol_exporter_cloudwatch_groups_delivery_failing_duration"
	gaugeFailures = "otelcol_exporter_cloudwatch_groups_delivery_consecutive_failures"
)

// logLine is a log entry as the table of TestDeliveryHealth states it.
type logLine struct {
	level zapcore.Level
	msg   string
}

func TestDeliveryHealth(t *testing.T) {
	const warnAfter = time.Minute
	const (
		warned    = "Delivery to CloudWatch Logs has been failing; undelivered events are retried"
		recovered = "Delivery to CloudWatch Logs recovered"
	)
	type step struct {
		at     time.Duration // since the start
		failed bool          // a failed call; else a successful PutLogEvents
	}
	tests := []struct {
		name         string
		steps        []step
		wantLogs     []logLine
		wantStatuses []componentstatus.Status
		wantFailing  int64 // gauge, seconds
		wantFailures int64 // gauge
	}{
		{
			name:  "successes only",
			steps: []step{{at: 0}, {at: time.Second}},
		},
		{
			name:         "a blip under the threshold is no warning",
			steps:        []step{{at: 0, failed: true}, {at: 10 * time.Second, failed: true}, {at: 20 * time.Second}},
			wantLogs:     []logLine{{zapcore.DebugLevel, recovered}},
			wantStatuses: []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK},
		},
		{
			name:         "failing past the threshold warns once per interval",
			steps:        []step{{at: 0, failed: true}, {at: 59 * time.Second, failed: true}, {at: 60 * time.Second, failed: true}, {at: 90 * time.Second, failed: true}, {at: 121 * time.Second, failed: true}},
			wantLogs:     []logLine{{zapcore.WarnLevel, warned}, {zapcore.WarnLevel, warned}},
			wantStatuses: []componentstatus.Status{componentstatus.StatusRecoverableError},
			wantFailing:  121,
			wantFailures: 5,
		},
		{
			name:         "recovery after a warning is logged at info and resets the period",
			steps:        []step{{at: 0, failed: true}, {at: 70 * time.Second, failed: true}, {at: 80 * time.Second}, {at: 90 * time.Second, failed: true}, {at: 100 * time.Second, failed: true}},
			wantLogs:     []logLine{{zapcore.WarnLevel, warned}, {zapcore.InfoLevel, recovered}},
			wantStatuses: []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK, componentstatus.StatusRecoverableError},
			wantFailing:  10,
			wantFailures: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := zapobserver.New(zapcore.DebugLevel)
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
			tb, err := metadata.NewTelemetryBuilder(tel.NewTelemetrySettings())
			require.NoError(t, err)
			start := time.Unix(1_700_000_000, 0)
			var now time.Time
			d := &deliveryHealth{warnAfter: warnAfter, logger: zap.New(core), tb: tb, now: func() time.Time { return now }}
			host := &statusHost{}
			ctx := context.Background()
			d.start(ctx, host)
			for _, s := range tt.steps {
				now = start.Add(s.at)
				if s.failed {
					d.failed(ctx, "PutLogEvents", errors.New("connection refused"))
				} else {
					d.delivered(ctx)
				}
			}
			var got []logLine
			for _, e := range logs.All() {
				got = append(got, logLine{e.Level, e.Message})
			}
			assert.Equal(t, tt.wantLogs, got)
			assert.Equal(t, tt.wantStatuses, host.statuses())
			assert.Equal(t, tt.wantFailing, gaugeValue(t, tel, gaugeFailing))
			assert.Equal(t, tt.wantFailures, gaugeValue(t, tel, gaugeFailures))

			// After stop nothing is reported any more.
			d.stop()
			n := len(host.statuses())
			d.failed(ctx, "PutLogEvents", errors.New("late"))
			d.delivered(ctx)
			assert.Len(t, host.statuses(), n)
		})
	}
}

// TestFailingDestinationIsVisible runs the exporter as the collector does (factory,
// exporterhelper's queue and retry, the real SDK client) against the local server, takes the
// server down (connections refused, like a wrong endpoint) and brings it back: the exporter
// reports RecoverableError, warns once delivery has failed past delivery_warn_after, shows the
// failure in its gauges, and reports OK, logs the recovery and delivers every event after.
func TestFailingDestinationIsVisible(t *testing.T) {
	awsEnv(t)
	b := startLocal(t, localConfig{Control: true})
	cfg := testConfig(b.endpoint)
	cfg.DeliveryWarnAfter = 300 * time.Millisecond
	cfg.TimeoutConfig.Timeout = time.Minute

	core, logs := zapobserver.New(zapcore.InfoLevel)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	exp, err := NewFactory().CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	host := &statusHost{}
	require.NoError(t, exp.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, exp.Shutdown(context.Background())) })

	ctx := context.Background()
	require.NoError(t, exp.ConsumeLogs(ctx, makeLogs(testSources, 10, time.Now(), "node-1")))
	require.Eventually(t, func() bool { return len(b.storedEvents(t)) == 10*len(testSources) }, 30*time.Second, 20*time.Millisecond)
	assert.Empty(t, host.statuses(), "nothing to report while delivering")

	require.NoError(t, b.local.call(http.MethodPost, "/local/faults", []byte(`{"down": true}`), nil))
	require.NoError(t, exp.ConsumeLogs(ctx, makeLogs(testSources, 10, time.Now(), "node-1")))
	require.Eventually(t, func() bool {
		return gaugeValue(t, tel, gaugeFailing) >= 1 && logs.FilterLevelExact(zapcore.WarnLevel).Len() > 0
	}, 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError}, host.statuses())
	assert.Greater(t, gaugeValue(t, tel, gaugeFailures), int64(1))
	warn := logs.FilterLevelExact(zapcore.WarnLevel).All()[0]
	assert.Equal(t, "Delivery to CloudWatch Logs has been failing; undelivered events are retried", warn.Message)
	fields := warn.ContextMap()
	assert.Contains(t, []string{"PutLogEvents", "CreateLogStream", "CreateLogGroup"}, fields["operation"])
	assert.Contains(t, fields["error"], "connection refused")
	assert.Empty(t, logs.FilterMessage("Delivery to CloudWatch Logs recovered").All())

	require.NoError(t, b.local.call(http.MethodPost, "/local/faults", []byte(`{}`), nil))
	require.Eventually(t, func() bool { return len(b.storedEvents(t)) == 20*len(testSources) }, 30*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return gaugeValue(t, tel, gaugeFailures) == 0 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, int64(0), gaugeValue(t, tel, gaugeFailing))
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}, host.statuses())
	rec := logs.FilterMessage("Delivery to CloudWatch Logs recovered").All()
	require.Len(t, rec, 1)
	assert.Equal(t, zapcore.InfoLevel, rec[0].Level)
}
