// SPDX-License-Identifier: Apache-2.0

package podmetadataextension

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/otelcol-k8s/otelcol-k8s/extension/podmetadataextension/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
)

// NewFactory returns the pod_metadata extension factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{
		MaxPods:               1024,
		MaxOwners:             4096,
		MaxNamespaces:         1024,
		OwnerTTL:              10 * time.Minute,
		NamespaceTTL:          time.Minute,
		ExcludeNamespaceLabel: podmeta.ExcludeLabel,
		LookupTimeout:         5 * time.Second,
		SyncTimeout:           30 * time.Second,
		QPS:                   20,
		Burst:                 50,
	}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newExtension(cfg.(*Config), set.TelemetrySettings)
}
