// SPDX-License-Identifier: Apache-2.0

// Command k8sevents-upstream runs contrib's k8s_events receiver (v0.139.0, the newest release
// the module mirror here serves) with its defaults against an API server, appending one line per
// log record it emits to a file, until SIGTERM. The Events benchmark
// (testbed/bench/k8sevents.sh) runs it beside kube_events.
package main

import (
	"context"
	"os"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/k8seventsreceiver"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/bench/eventsbenchkit"
)

func main() {
	flags := eventsbenchkit.ParseFlags()
	sink, err := eventsbenchkit.OpenSink(flags.Records)
	if err != nil {
		panic(err)
	}
	// auth_type kubeConfig reads the kubeconfig through the usual loading rules.
	_ = os.Setenv("KUBECONFIG", flags.Kubeconfig)
	f := k8seventsreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*k8seventsreceiver.Config)
	cfg.AuthType = "kubeConfig" // k8sconfig.AuthTypeKubeConfig (an internal package)
	next, _ := consumer.NewLogs(func(_ context.Context, ld plog.Logs) error {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					a := lrs.At(k).Attributes()
					uid, _ := a.Get("k8s.event.uid")
					count, _ := a.Get("k8s.event.count")
					sink.Record(uid.Str(), count.Int(), "-")
				}
			}
		}
		return nil
	})
	rcv, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		panic(err)
	}
	eventsbenchkit.Run(sink, flags.CPUProfile,
		func(ctx context.Context) error { return rcv.Start(ctx, componenttest.NewNopHost()) },
		rcv.Shutdown)
}
