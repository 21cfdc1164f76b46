// SPDX-License-Identifier: Apache-2.0

// Command cloudwatchgroups-bench sends a generated corpus through the cloudwatch_groups
// exporter to a local CloudWatch Logs server and prints events per CPU-second, PutLogEvents
// calls per MiB and the batch fill ratio. testbed/bench/cloudwatchgroups.sh runs it beside
// the same program for contrib's awscloudwatchlogs exporter.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/bench/cwbenchkit"
)

func main() {
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	spec, endpoint := cwbenchkit.Flags(fs)
	minMiB := fs.Int("batch-min-mib", 0, "sending_queue.batch.min_size in MiB (0: the default)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured part here")
	items := fs.Int("batch-items", 0, "use the items sizer with this min_size (max 4x) instead of bytes")
	maxMiB := fs.Int("batch-max-mib", 0, "sending_queue.batch.max_size in MiB (0: the default)")
	_ = fs.Parse(os.Args[1:])

	chunks := cwbenchkit.Logs(spec.Chunks())
	f := cloudwatchgroupsexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*cloudwatchgroupsexporter.Config)
	cfg.Endpoint = *endpoint
	cfg.Region = "us-east-1"
	q := cfg.QueueConfig.Get()
	q.BlockOnOverflow = true
	name := "cloudwatch_groups"
	if *minMiB > 0 {
		q.Batch.Get().MinSize = int64(*minMiB) << 20
		q.Batch.Get().MaxSize = max(q.Batch.Get().MaxSize, int64(*minMiB)<<20)
		name = fmt.Sprintf("cloudwatch_groups(min %d MiB)", *minMiB)
	}
	if *maxMiB > 0 {
		q.Batch.Get().MaxSize = int64(*maxMiB) << 20
	}
	if *items > 0 {
		b := q.Batch.Get()
		b.Sizer = exporterhelper.RequestSizerTypeItems
		b.MinSize, b.MaxSize = int64(*items), 4*int64(*items)
		name = fmt.Sprintf("cloudwatch_groups(min %d items)", *items)
	}
	set := exportertest.NewNopSettings(f.Type())
	set.ID = component.NewIDWithName(f.Type(), "bench")

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
