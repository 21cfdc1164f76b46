// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// sendPathOps are the calls whose failure holds delivery back: PutLogEvents and the group and
// stream creation it waits for. Failures of the group settings calls (in the background) are
// not delivery failures.
var sendPathOps = map[string]bool{"PutLogEvents": true, "CreateLogStream": true, "CreateLogGroup": true}

// deliveryHealth follows whether the exporter delivers (design.md, section 6a): a failing
// period starts at the first failed call of the send path after a successful PutLogEvents and
// ends at the next successful one. It makes such a period visible three ways: a warn-level
// line once the period is older than warnAfter (again every warnAfter while it lasts) and an
// info-level line when it ends, two gauges, and the component's status (RecoverableError when
// the period starts, OK when it ends) for the health_check extension. It is safe for
// concurrent use.
type deliveryHealth struct {
	warnAfter time.Duration
	logger    *zap.Logger
	tb        *metadata.TelemetryBuilder
	now       func() time.Time

	mu sync.Mutex
	// host receives status events; nil before start and after the exporter began to stop.
	host         component.Host
	failingSince time.Time // zero while delivering
	failures     int64     // failed calls since failingSince
	lastWarn     time.Time // zero: no warning in this period
}

// start records the gauges' first values and begins reporting status to host.
func (d *deliveryHealth) start(ctx context.Context, host component.Host) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.host = host
	d.tb.ExporterCloudwatchGroupsDeliveryFailingDuration.Record(ctx, 0)
	d.tb.ExporterCloudwatchGroupsDeliveryConsecutiveFailures.Record(ctx, 0)
}

// stop ends status reporting: once the collector reports the exporter stopping, a late
// failure of the last tries must not report it failing.
func (d *deliveryHealth) stop() {
	d.mu.Lock()
	d.host = nil
	d.mu.Unlock()
}

// delivered records a successful PutLogEvents call.
func (d *deliveryHealth) delivered(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failingSince.IsZero() {
		return
	}
	failedFor := d.now().Sub(d.failingSince)
	fields := []zap.Field{zap.Duration("failed_for", failedFor.Round(time.Millisecond)), zap.Int64("failed_calls", d.failures)}
	if !d.lastWarn.IsZero() {
		d.logger.Info("Delivery to CloudWatch Logs recovered", fields...)
	} else {
		d.logger.Debug("Delivery to CloudWatch Logs recovered", fields...)
	}
	d.failingSince, d.failures, d.lastWarn = time.Time{}, 0, time.Time{}
	d.tb.ExporterCloudwatchGroupsDeliveryFailingDuration.Record(ctx, 0)
	d.tb.ExporterCloudwatchGroupsDeliveryConsecutiveFailures.Record(ctx, 0)
	if d.host != nil {
		componentstatus.ReportStatus(d.host, componentstatus.NewEvent(componentstatus.StatusOK))
	}
}

// failed records a failed call of the send path (op) or a batch given up without a call
// answering (err says why).
func (d *deliveryHealth) failed(ctx context.Context, op string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	if d.failingSince.IsZero() {
		d.failingSince = now
		// Reported once per period: the health_check extension measures how long a component
		// has been in RecoverableError from this event's time, and a new event would reset it.
		if d.host != nil {
			componentstatus.ReportStatus(d.host, componentstatus.NewRecoverableErrorEvent(
				fmt.Errorf("delivery to CloudWatch Logs is failing: %s: %w", op, err)))
		}
	}
	d.failures++
	failingFor := now.Sub(d.failingSince)
	d.tb.ExporterCloudwatchGroupsDeliveryFailingDuration.Record(ctx, int64(failingFor/time.Second))
	d.tb.ExporterCloudwatchGroupsDeliveryConsecutiveFailures.Record(ctx, d.failures)
	if failingFor < d.warnAfter || (!d.lastWarn.IsZero() && now.Sub(d.lastWarn) < d.warnAfter) {
		return
	}
	d.lastWarn = now
	d.logger.Warn("Delivery to CloudWatch Logs has been failing; undelivered events are retried",
		zap.Duration("failing_for", failingFor.Round(time.Second)), zap.Int64("failed_calls", d.failures),
		zap.String("operation", op), zap.Error(err))
}
