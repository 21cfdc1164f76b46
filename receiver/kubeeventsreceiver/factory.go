// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

// NewFactory returns the kube_events receiver factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithLogs(createLogs, metadata.LogsStability),
		receiver.WithTraces(createTraces, metadata.TracesStability))
}

// shared holds one receiver per configuration, so a logs and a traces pipeline naming the same
// kube_events share one watch, one Lease and one checkpoint.
var shared = struct {
	sync.Mutex
	byConfig map[*Config]*kubeEventsReceiver
}{byConfig: map[*Config]*kubeEventsReceiver{}}

// sharedReceiver returns the receiver of cfg, creating it on first use; attach sets the
// pipeline's consumer.
func sharedReceiver(set receiver.Settings, cfg *Config, attach func(*kubeEventsReceiver)) (*kubeEventsReceiver, error) {
	shared.Lock()
	defer shared.Unlock()
	r, ok := shared.byConfig[cfg]
	if !ok {
		var err error
		r, err = newReceiver(set, cfg)
		if err != nil {
			return nil, err
		}
		r.release = func() {
			shared.Lock()
			defer shared.Unlock()
			delete(shared.byConfig, cfg)
		}
		shared.byConfig[cfg] = r
	}
	attach(r)
	return r, nil
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	return sharedReceiver(set, cfg.(*Config), func(r *kubeEventsReceiver) { r.nextLogs = next })
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	return sharedReceiver(set, cfg.(*Config), func(r *kubeEventsReceiver) { r.nextTraces = next })
}
