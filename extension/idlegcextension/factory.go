// SPDX-License-Identifier: Apache-2.0

package idlegcextension

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/otelcol-k8s/otelcol-k8s/extension/idlegcextension/internal/metadata"
)

// NewFactory returns the idle_gc extension factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{
		CheckInterval:         5 * time.Second,
		IdleBelowKiBPerSecond: 1024,
		IdleAfter:             30 * time.Second,
		IdleGCPercent:         25,
		ReleaseBinaryPages:    true,
		// What is left is the binary's resident pages, the queue database's mapped pages and
		// what the runtime holds outside its heap accounting; the Helm chart's GOMEMLIMIT is
		// the same 80%.
		MemoryLimitPercent: 80,
	}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newIdleGC(cfg.(*Config), set.TelemetrySettings)
}
