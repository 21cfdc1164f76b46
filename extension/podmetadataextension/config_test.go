// SPDX-License-Identifier: Apache-2.0

package podmetadataextension

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/extension/podmetadataextension/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	for _, tc := range []struct {
		id      string
		check   func(*testing.T, *Config)
		wantErr []string
	}{
		{id: "", wantErr: []string{"node_name: required"}},
		{id: "node", check: func(t *testing.T, c *Config) {
			assert.Equal(t, "/etc/kube/config", c.Kubeconfig)
			assert.Equal(t, "node-1", c.NodeName)
			assert.Equal(t, 300, c.MaxPods)
			assert.Equal(t, 5*time.Minute, c.OwnerTTL)
			assert.Equal(t, 30*time.Second, c.NamespaceTTL)
			assert.Equal(t, "logging.example.com/off", c.ExcludeNamespaceLabel)
			assert.Equal(t, 4096, c.MaxOwners, "defaults kept")
		}},
		{id: "bad", wantErr: []string{"node_name: required", "max_pods 0: must be positive", "owner_ttl 0s: must be positive"}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tc.id).String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = cfg.Validate()
			if len(tc.wantErr) > 0 {
				require.Error(t, err)
				for _, w := range tc.wantErr {
					require.ErrorContains(t, err, w)
				}
				return
			}
			require.NoError(t, err)
			tc.check(t, cfg)
		})
	}
}
