// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/otelcol-k8s/otelcol-k8s/extension/tracecontextextension/internal/metadata"
)

// NewFactory returns the trace_context extension factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{
		Mode:        ModeWatch,
		Resources:   defaultResources(),
		MaxObjects:  100_000,
		OwnerTTL:    10 * time.Minute,
		SyncTimeout: 30 * time.Second,
	}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newExtension(cfg.(*Config), set.TelemetrySettings)
}
