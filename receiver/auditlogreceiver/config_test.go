// SPDX-License-Identifier: Apache-2.0

package auditlogreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/auditlogreceiver/internal/metadata"
)

func TestConfig(t *testing.T) {
	t.Parallel()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	storage := component.MustNewID("file_storage")
	api := createDefaultConfig().(*Config)
	api.Include = []string{"/var/log/kubernetes/audit/*.log"}
	api.Format = FormatKubernetes
	api.StartAt = StartAtBeginning
	api.PollInterval = 500 * time.Millisecond
	api.EventTimeout = time.Second
	api.MaxLineBytes = 4 << 20
	api.Storage = &storage
	for _, tc := range []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: createDefaultConfig().(*Config)},
		{name: "apiserver", want: api},
		{name: "bad_format", wantErr: `"syslog": must be auditd or kubernetes`},
		{name: "bad_start_at", wantErr: `"middle": must be beginning or end`},
		{name: "bad_numbers", wantErr: "include: empty"},
		{name: "bad_numbers", wantErr: "poll_interval 0s: must be positive"},
		{name: "bad_numbers", wantErr: "event_timeout 0s: must be positive"},
		{name: "bad_numbers", wantErr: "max_line_bytes 10: must be at least 1024"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tc.name).String())
			require.NoError(t, err)
			cfg := createDefaultConfig()
			err = sub.Unmarshal(cfg)
			if err == nil {
				err = cfg.(*Config).Validate()
			}
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg)
		})
	}
}
