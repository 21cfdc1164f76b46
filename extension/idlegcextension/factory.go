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
	}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newIdleGC(cfg.(*Config), set.TelemetrySettings)
}
