// SPDX-License-Identifier: Apache-2.0

package awssigv4authextension

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/extension/awssigv4authextension/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	tests := []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: &Config{Service: "xray"}},
		{name: "logs", want: &Config{Region: "eu-west-1", Service: "logs"}},
		{name: "role", want: &Config{Region: "us-west-2", Service: "xray", AssumeRole: AssumeRole{
			ARN: "arn:aws:iam::123456789012:role/otelcol-traces", SessionName: "events", STSRegion: "us-east-1",
		}}},
		{name: "bad_arn", wantErr: `assume_role.arn "arn:aws:s3:::bucket": not an IAM role ARN`},
		{name: "bad_service", wantErr: `service "": must be a signing name`},
		{name: "session_without_arn", wantErr: "assume_role: session_name and sts_region need arn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.name).String())
			require.NoError(t, err)
			cfg := NewFactory().CreateDefaultConfig()
			require.NoError(t, sub.Unmarshal(cfg))
			err = cfg.(*Config).Validate()
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg)
		})
	}
}
