// SPDX-License-Identifier: Apache-2.0

package queuestorageextension

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/extension/queuestorageextension/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	tests := []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: &Config{Directory: "/var/lib/otelcol/queue_storage", CreateDirectory: true, SegmentSize: 8 << 20}},
		{name: "custom", want: &Config{Directory: "/var/lib/otelcol/queue", CreateDirectory: false, Fsync: true, SegmentSize: 1 << 20, ImportFileStorage: "/var/lib/otelcol"}},
		{name: "no_directory", wantErr: "directory: must be set"},
		{name: "small_segments", wantErr: "segment_size 1024: at least 4096"},
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
