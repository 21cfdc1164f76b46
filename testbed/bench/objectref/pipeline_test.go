// SPDX-License-Identifier: Apache-2.0

package objectref

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor"
	"github.com/otelcol-k8s/otelcol-k8s/processor/objectrefprocessor"
)

// newProcessor builds and starts a logs processor with its default configuration.
func newProcessor(tb testing.TB, f processor.Factory, next consumer.Logs) processor.Logs {
	tb.Helper()
	return newConfiguredProcessor(tb, f, f.CreateDefaultConfig(), next)
}

// newConfiguredProcessor builds and starts a logs processor.
func newConfiguredProcessor(tb testing.TB, f processor.Factory, cfg component.Config, next consumer.Logs) processor.Logs {
	tb.Helper()
	p, err := f.CreateLogs(context.Background(), processortest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// newPipeline returns klog_parser -> object_ref -> next.
func newPipeline(tb testing.TB, next consumer.Logs) processor.Logs {
	return newProcessor(tb, klogparserprocessor.NewFactory(), newProcessor(tb, objectrefprocessor.NewFactory(), next))
}

// batch returns logs with one record per line, the line as body, repeated times times.
func batch(lines []string, times int) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	lrs.EnsureCapacity(len(lines) * times)
	for range times {
		for _, l := range lines {
			lrs.AppendEmpty().Body().SetStr(l)
		}
	}
	return ld
}
