// SPDX-License-Identifier: Apache-2.0

package journalreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver/internal/metadata"
)

func TestConfig(t *testing.T) {
	t.Parallel()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	storage := component.MustNewIDWithName("file_storage", "journal")
	custom := createDefaultConfig().(*Config)
	custom.Directories = []string{"/var/log/journal"}
	custom.Units = []string{"kubelet.service"}
	custom.Identifiers = []string{}
	custom.Priority = "warning"
	custom.StartAt = StartAtEnd
	custom.PollInterval = time.Second
	custom.MaxBatch = 500
	custom.Storage = &storage
	for _, tc := range []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: createDefaultConfig().(*Config)},
		{name: "custom", want: custom},
		{name: "bad_priority", wantErr: `priority "verbose": must be one of`},
		{name: "bad_start_at", wantErr: `start_at "middle": must be beginning or end`},
		{name: "bad_numbers", wantErr: "poll_interval 0s: must be positive"},
		{name: "bad_numbers", wantErr: "max_batch 0: must be positive"},
		{name: "bad_numbers", wantErr: "directories: empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tc.name).String())
			require.NoError(t, err)
			cfg := createDefaultConfig()
			require.NoError(t, sub.Unmarshal(cfg))
			err = cfg.(*Config).Validate()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg)
		})
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	cfg := createDefaultConfig().(*Config)
	require.Equal(t, []string{"/var/log/journal", "/run/log/journal"}, cfg.Directories)
	require.Equal(t, []string{"kubelet.service", "containerd.service", "docker.service", "sandbox-image.service"}, cfg.Units)
	require.Equal(t, []string{"kernel"}, cfg.Identifiers)
	require.NoError(t, cfg.Validate())
}
