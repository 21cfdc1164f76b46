// SPDX-License-Identifier: Apache-2.0

package idlegcextension

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/extension/idlegcextension/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	tests := []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: &Config{CheckInterval: 5 * time.Second, IdleBelowKiBPerSecond: 1024, IdleAfter: 30 * time.Second, IdleGCPercent: 25, ReleaseBinaryPages: true, MemoryLimitPercent: 80}},
		{name: "custom", want: &Config{CheckInterval: 2 * time.Second, IdleBelowKiBPerSecond: 512, IdleAfter: time.Minute, IdleGCPercent: 50, ReleaseBinaryPages: false, MemoryLimitPercent: 0}},
		{name: "fast_check", wantErr: "check_interval 10ms: at least 100ms"},
		{name: "no_rate", wantErr: "idle_below_kib_per_second 0: must be positive"},
		{name: "short_idle_after", wantErr: "idle_after 5s: at least check_interval (10s)"},
		{name: "percent_too_high", wantErr: "idle_gc_percent 150: between 1 and 100"},
		{name: "memory_limit_too_high", wantErr: "memory_limit_percent 120: between 0 (off) and 100"},
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
