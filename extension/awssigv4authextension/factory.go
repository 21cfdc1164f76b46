// SPDX-License-Identifier: Apache-2.0

package awssigv4authextension

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/otelcol-k8s/otelcol-k8s/extension/awssigv4authextension/internal/metadata"
)

// defaultService is the signing name of the X-Ray OTLP endpoint.
const defaultService = "xray"

// NewFactory returns the aws_sigv4_auth extension factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{Service: defaultService}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newAuthenticator(cfg.(*Config), set.TelemetrySettings)
}
