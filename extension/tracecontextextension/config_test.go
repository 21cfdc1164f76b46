// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/extension/tracecontextextension/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	defaults := func(mod func(*Config)) *Config {
		c := createDefaultConfig().(*Config)
		mod(c)
		return c
	}
	tests := []struct {
		name    string
		want    *Config
		wantErr []string
	}{
		{name: "", want: defaults(func(*Config) {})},
		{name: "node", want: defaults(func(c *Config) {
			c.Kubeconfig, c.NodeName, c.MaxObjects, c.OwnerTTL, c.SyncTimeout = "/etc/kube/config", "node-1", 5000, 5*time.Minute, 10*time.Second
			pm := component.MustNewID("pod_metadata")
			c.PodMetadata = &pm
			c.Trust = TrustConfig{Namespaces: []string{"shop"}, Kinds: []string{"Deployment"}}
		})},
		{name: "custom", want: defaults(func(c *Config) {
			c.Resources = []Resource{
				{Version: "v1", Resource: "pods", Kind: "Pod"},
				{Group: "serving.knative.dev", Version: "v1", Resource: "revisions", Kind: "Revision"},
			}
		})},
		{name: "lookup", want: defaults(func(c *Config) { c.Mode, c.OwnerTTL = ModeLookup, 2*time.Minute })},
		{name: "lookup_on_node", wantErr: []string{"mode: lookup fetches the objects asked about; it has no node scope"}},
		{name: "no_pods_in_node_scope", wantErr: []string{"node_name: node scope watches Pods; resources must include pods"}},
		{name: "untrusted_kind", wantErr: []string{
			"pod_metadata: node scope only (set node_name)",
			`trust: kinds: "Gadget" is not a kind of resources`,
			"trust: namespaces: empty name",
		}},
		{name: "bad", wantErr: []string{"resources[0]: version, resource and kind are required", "max_objects 0: must be positive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := createDefaultConfig()
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.name).String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = cfg.(*Config).Validate()
			if len(tt.wantErr) > 0 {
				for _, w := range tt.wantErr {
					require.ErrorContains(t, err, w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

// TestDefaultResourcesFromTheKindTable: the default kinds take their group, version and resource
// from the object model's kind table.
func TestDefaultResourcesFromTheKindTable(t *testing.T) {
	got := defaultResources()
	require.Len(t, got, 7)
	assert.Equal(t, Resource{Version: "v1", Resource: "pods", Kind: "Pod"}, got[0])
	assert.Equal(t, Resource{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet"}, got[1])
	assert.Equal(t, Resource{Group: "batch", Version: "v1", Resource: "cronjobs", Kind: "CronJob"}, got[6])
	cfg := createDefaultConfig().(*Config)
	assert.Equal(t, got, cfg.Resources)
	require.NoError(t, cfg.Validate())
}

func TestModeUnmarshalText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    Mode
		wantErr string
	}{
		{"watch", ModeWatch, ""},
		{"lookup", ModeLookup, ""},
		{"poll", "", `mode: "poll" is not watch or lookup`},
		{"", "", `mode: "" is not watch or lookup`},
	} {
		var m Mode
		err := m.UnmarshalText([]byte(tc.in))
		if tc.wantErr != "" {
			require.EqualError(t, err, tc.wantErr, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, m)
	}
}
