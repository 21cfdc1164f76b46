// SPDX-License-Identifier: Apache-2.0

// Command cloudwatch-upstream-bench sends the same generated corpus as
// testbed/bench/cloudwatchgroups through contrib's awscloudwatchlogs exporter (v0.139.0, the
// newest release that builds from the module mirror here) to a local CloudWatch Logs server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/awscloudwatchlogsexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/bench/cwbenchkit"
)

func main() {
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	spec, endpoint := cwbenchkit.Flags(fs)
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured part here")
	sameQueue := fs.Bool("same-queue", true, "use a bytes-sized batching queue (4-16 MiB) instead of the exporter's defaults")
	batchMiB := fs.Int("batch-min-mib", 4, "with -same-queue: batch min_size in MiB (max is 4x)")
	_ = fs.Parse(os.Args[1:])

	chunks := cwbenchkit.Logs(spec.Chunks())
	f := awscloudwatchlogsexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*awscloudwatchlogsexporter.Config)
	cfg.Endpoint = *endpoint
	cfg.AWSSessionSettings.Endpoint = *endpoint
	cfg.Region = "us-east-1"
	cfg.LogGroupName = "application"
	cfg.LogStreamName = "{NodeName}.{PodName}" // the only templates it knows: k8s.node.name, pod
	cfg.QueueSettings.BlockOnOverflow = true
	name := "awscloudwatchlogs(defaults)"
	if *sameQueue {
		name = "awscloudwatchlogs"
		// One consumer, as its default: v0.139.0's stream manager is not safe for concurrent
		// pushes (4 consumers and 64 streams end in "concurrent map read and map write").
		cfg.QueueSettings.NumConsumers = 1
		cfg.QueueSettings.Batch = configoptional.Some(exporterhelper.BatchConfig{
			FlushTimeout: 5 * time.Second,
			Sizer:        exporterhelper.RequestSizerTypeBytes,
			MinSize:      int64(*batchMiB) << 20,
			MaxSize:      4 * int64(*batchMiB) << 20,
		})
		if *batchMiB != 4 {
			name = fmt.Sprintf("awscloudwatchlogs(min %d MiB)", *batchMiB)
		}
	}
	set := exportertest.NewNopSettings(f.Type())
	set.ID = component.NewIDWithName(f.Type(), "bench")
	if os.Getenv("BENCH_DEBUG") != "" {
		set.Logger, _ = zap.NewDevelopment()
	}

	res, err := cwbenchkit.Measure(name, *endpoint, chunks, *cpuProfile, func() (cwbenchkit.LogsExporter, error) {
		exp, err := f.CreateLogs(context.Background(), set, cfg)
		if err != nil {
			return nil, err
		}
		return exp, exp.Start(context.Background(), componenttest.NewNopHost())
	})
	if err != nil {
		cwbenchkit.Fatal(err)
	}
	res.Print()
}
