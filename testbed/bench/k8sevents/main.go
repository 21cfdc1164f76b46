// SPDX-License-Identifier: Apache-2.0

// Command k8sevents runs the kube_events receiver with the shipped events configuration's
// receiver settings (its defaults and leader election, so the checkpoint is the ConfigMap beside
// the Lease) against an API server, appending one line per log record it emits to a file, until
// SIGTERM. The Events benchmark (testbed/bench/k8sevents.sh) runs it beside contrib's k8s_events;
// -compressed scales the series timers down 60 times for the CrashLoop measurement.
package main

import (
	"context"
	"flag"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/bench/eventsbenchkit"
)

var compressed = flag.Bool("compressed", false, "series timers 60 times shorter (a 1-hour CrashLoop in a minute)")

func main() {
	flags := eventsbenchkit.ParseFlags()
	sink, err := eventsbenchkit.OpenSink(flags.Records)
	if err != nil {
		panic(err)
	}
	f := kubeeventsreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*kubeeventsreceiver.Config)
	cfg.Kubeconfig = flags.Kubeconfig
	cfg.LeaderElection.Enabled = true
	cfg.LeaderElection.LeaseName = "otelcol-k8s-events"
	cfg.LeaderElection.LeaseNamespace = "default"
	cfg.LeaderElection.Identity = flags.Identity
	if *compressed {
		s := &cfg.Series
		s.FinishWindow /= 60
		s.HeartbeatTimeout /= 60
		s.FinishAfter /= 60
		s.OngoingInterval /= 60
		s.SweepInterval = time.Second
	}
	next, _ := consumer.NewLogs(func(_ context.Context, ld plog.Logs) error {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					a := lrs.At(k).Attributes()
					uid, _ := a.Get(attr.EventUID)
					count, _ := a.Get(attr.EventCount)
					state, _ := a.Get(attr.EventSeriesState)
					sink.Record(uid.Str(), count.Int(), state.Str())
				}
			}
		}
		return nil
	})
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	rcv, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		panic(err)
	}
	eventsbenchkit.Run(sink, flags.CPUProfile,
		func(ctx context.Context) error { return rcv.Start(ctx, componenttest.NewNopHost()) },
		rcv.Shutdown)
}
