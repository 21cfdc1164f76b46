// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/batching"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/routing"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// NewFactory returns the factory of the cloudwatch_groups exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithLogs(createLogsExporter, metadata.LogsStability),
	)
}

// Default batch: requests are sized in CloudWatch bytes and partitioned by stream (see
// request.go), so one batch of 1,048,576 bytes is exactly one full PutLogEvents call; at low
// rates the flush timeout sends what a stream has. Eight consumers send up to eight batches
// at once, so about 8 MiB of encoded events is in flight, plus what the partitions collect.
const (
	defaultBatchBytes   = batching.MaxBatchBytes
	defaultFlushTimeout = 5 * time.Second
	defaultNumConsumers = 8
)

func createDefaultConfig() component.Config {
	queue := exporterhelper.NewDefaultQueueConfig()
	queue.NumConsumers = defaultNumConsumers
	// A full queue makes ConsumeLogs wait for room (bounded by the caller's context) instead
	// of refusing: the receiver resumes the moment a send frees space, not after a backoff.
	queue.BlockOnOverflow = true
	queue.Batch = configoptional.Some(exporterhelper.BatchConfig{
		FlushTimeout: defaultFlushTimeout,
		Sizer:        exporterhelper.RequestSizerTypeBytes,
		MinSize:      defaultBatchBytes,
		MaxSize:      defaultBatchBytes,
	})
	timeout := exporterhelper.NewDefaultTimeoutConfig()
	timeout.Timeout = 5 * time.Minute
	// Retry until delivered: with a bounded queue that blocks when full, an outage of any
	// length fills the queue and then pauses the receivers; nothing is dropped.
	backoff := configretry.NewDefaultBackOffConfig()
	backoff.MaxElapsedTime = 0
	return &Config{
		TimeoutConfig: timeout,
		QueueConfig:   configoptional.Some(queue),
		BackOffConfig: backoff,
		// A few of the backoff's longest waits (30 s): a burst of throttling is no warning.
		DeliveryWarnAfter: 5 * time.Minute,
		GroupBy:           GroupByLogType,
		GroupSeparator:    ".",
		LogType: LogTypeConfig{
			Attribute:                attr.LogType,
			InfrastructureNamespaces: []string{"default", "kube-*", "openshift-*"},
			JournalMatchers: []routing.Matcher{
				{Key: attr.LogFilePath, Pattern: "/var/log/journal/*"},
				{Key: attr.LogFilePath, Pattern: "/run/log/journal/*"},
			},
			AuditMatchers: []routing.Matcher{
				{Key: attr.LogFilePath, Pattern: "/var/log/kube-apiserver/audit*.log"},
				{Key: attr.LogFilePath, Pattern: "/var/log/kubernetes/audit*.log"},
				{Key: attr.LogFilePath, Pattern: "/var/log/openshift-apiserver/audit*.log"},
				{Key: attr.LogFilePath, Pattern: "/var/log/oauth-apiserver/audit*.log"},
				{Key: attr.LogFilePath, Pattern: "/var/log/audit/audit.log*"},
				{Key: attr.LogFilePath, Pattern: "/var/log/ovn/acl-audit-log*.log"},
			},
		},
		MessageFormat:       MessageFormatJSON,
		MaxEventBytes:       batching.MaxEventBytes,
		Oversize:            OversizeTruncate,
		MaxConcurrency:      8,
		CreateLogGroupRate:  5,
		CreateLogStreamRate: 40,
	}
}

func createLogsExporter(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c := cfg.(*Config)
	e, err := newExporter(c, set)
	if err != nil {
		return nil, err
	}
	return wrapExporter(ctx, set, c, e)
}

// wrapExporter puts exporterhelper's queue, batcher, retry and timeout around e.
func wrapExporter(ctx context.Context, set exporter.Settings, c *Config, e *cwExporter) (exporter.Logs, error) {
	qs := xexporterhelper.QueueBatchSettings{
		Encoding:    queueEncoding{e},
		Partitioner: streamPartitioner{},
	}
	// One retry policy, two loops (design.md, section 6): the sender retries single calls, so
	// delivered batches stay delivered, and exporterhelper repeats what is still undelivered.
	// The exporter owns the max_elapsed_time budget across both (pushRequest drops and counts
	// when it is spent), so exporterhelper's loop runs without one.
	outer := c.BackOffConfig
	outer.MaxElapsedTime = 0
	exp, err := xexporterhelper.NewLogsRequest(ctx, set, e.convert, e.pushRequest,
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(c.TimeoutConfig),
		exporterhelper.WithRetry(outer),
		xexporterhelper.WithQueueBatch(c.QueueConfig, qs),
	)
	if err != nil {
		return nil, err
	}
	if c.QueueConfig.HasValue() && c.QueueConfig.Get().StorageID != nil {
		return stopRetriesFirst{Logs: exp, stop: e.stopRetries}, nil
	}
	// A memory queue loses what it holds at a stop: keep retrying while it drains (each
	// request bounded by timeout), as exporterhelper does.
	return exp, nil
}

// stopRetriesFirst ends the exporter's retry waits before exporterhelper's shutdown begins,
// when the queue is persistent (design.md, section 6). A push retrying through an outage then
// returns at once with its undelivered events; exporterhelper's retry, stopped next, answers
// with a shutdown error, which makes the persistent queue keep the whole request for the next
// start instead of removing it. Shutdown therefore takes one try per pending batch, not a
// request's timeout.
type stopRetriesFirst struct {
	exporter.Logs
	stop func()
}

func (s stopRetriesFirst) Shutdown(ctx context.Context) error {
	s.stop()
	return s.Logs.Shutdown(ctx)
}
