// SPDX-License-Identifier: Apache-2.0

package queuestorageextension

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/otelcol-k8s/otelcol-k8s/extension/queuestorageextension/internal/metadata"
)

// NewFactory returns the queue_storage extension factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{
		Directory:       "/var/lib/otelcol/queue_storage",
		CreateDirectory: true,
		Fsync:           false,
		// A few dozen files for a queue of a few hundred MiB; whole segments are what a FIFO
		// queue frees.
		SegmentSize: 8 << 20,
	}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newQueueStorage(cfg.(*Config), set)
}
