// SPDX-License-Identifier: Apache-2.0

package k8slifecyclereceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	ext := component.MustNewID("trace_context")
	tests := []struct {
		id      string
		want    *Config
		wantErr string
	}{
		{id: "kube_lifecycle", want: createDefaultConfig().(*Config)},
		{id: "kube_lifecycle/node", want: &Config{
			Kubeconfig: "/etc/kube/config", NodeName: "node-1", Timeout: 5 * time.Minute, MaxPending: 500,
			TraceContext: &ext, SyncTimeout: 10 * time.Second,
		}},
		{id: "kube_lifecycle/bad", wantErr: "timeout 0s: must be positive\nmax_pending 0: must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id)
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = cfg.(*Config).Validate()
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg)
		})
	}
}
