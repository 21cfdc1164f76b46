// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/processor/objectrefprocessor/internal/metadata"
)

func strPtr(s string) *string { return &s }

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	traceExt := component.MustNewID("trace_context")

	tests := []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: &Config{Form: FormString, Match: MatchConfig{Klog: true}}},
		{name: "map", want: &Config{Form: FormMap, Body: true, KeyPrefix: "klog.", Match: MatchConfig{Klog: true}}},
		{name: "match", want: &Config{Form: FormString, Match: MatchConfig{Klog: true, Namespaces: []string{"kube-system"}, Containers: []string{"kube-proxy"}}}},
		{name: "events", want: &Config{Form: FormString, Match: MatchConfig{All: true}, Body: true, BodyField: "object"}},
		{name: "custom", want: &Config{
			Form:  FormString,
			Match: MatchConfig{Klog: true},
			Keys: []KeyConfig{
				{Key: "certificate", Kind: "Certificate"},
				{Key: "pod", Kind: "Pod", NamespaceKey: strPtr("podNamespace"), UIDKey: strPtr("")},
				{Key: "target", KindKey: "targetKind", Subject: boolPtr(false)},
				{Key: "certificates", Kind: "Certificate", List: true},
			},
			ExcludeKeys: []string{"lease", "ingress"},
			Kinds: []KindConfig{
				{Kind: "Certificate", APIVersion: "cert-manager.io/v1", Namespaced: true},
				{Kind: "Lease", APIVersion: "coordination.k8s.io/v1", Namespaced: true},
			},
			TraceContext: &traceExt,
		}},
		{name: "bad_form", wantErr: `'form' "yaml" is not one of "string", "map"`},
		{name: "unknown_kind", wantErr: `key "certificate": kind "Certificate" is not in the kind table`},
		{name: "both_kinds", wantErr: "keys[0]: kind and kind_key are exclusive"},
		{name: "duplicate_key", wantErr: `keys[1]: key "pod" is listed twice`},
		{name: "no_key", wantErr: "keys[0]: key is required"},
		{name: "duplicate_kind", wantErr: `kinds[1]: kind "Foo" is listed twice`},
		{name: "kind_without_api_version", wantErr: "kinds[0]: api_version is required"},
		{name: "matches_nothing", wantErr: "match: matches no record"},
		{name: "body_field_without_body", wantErr: "body_field needs body: true"},
		{name: "key_is_subject_attribute", wantErr: `keys[0]: key "k8s.pod.name" is a reserved attribute name`},
		{name: "key_is_own_attribute", wantErr: `keys[0]: key "otelcol_k8s.object.name" is a reserved attribute name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := component.NewIDWithName(metadata.Type, tt.name)
			sub, err := cm.Sub(id.String())
			require.NoError(t, err)
			cfg := NewFactory().CreateDefaultConfig().(*Config)
			// Enum values are checked when read (UnmarshalText), the rest by Validate; both
			// errors name the YAML key.
			err = sub.Unmarshal(cfg)
			if err == nil {
				err = cfg.Validate()
			}
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestBuildTableOrder(t *testing.T) {
	cfg := &Config{
		Keys:        []KeyConfig{{Key: "claim", Kind: "PersistentVolumeClaim"}, {Key: "pod", Kind: "Pod", UIDKey: strPtr("")}},
		ExcludeKeys: []string{"lease"},
	}
	tb, err := buildTable(cfg)
	require.NoError(t, err)
	assert.Equal(t, "claim", tb.keys[0].key)
	assert.Equal(t, "pod", tb.keys[1].key)
	assert.Empty(t, tb.keys[1].attrSiblings.uid, "configured entry replaces the built-in one")
	assert.Equal(t, "node", tb.keys[2].key, "built-ins follow, minus overridden ones")
	assert.Equal(t, -1, tb.lookup("lease"))
	assert.Equal(t, -1, tb.lookup("Pod"), "keys match exactly")
	assert.Equal(t, 1, tb.lookup("pod"))
	for _, k := range tb.keys {
		if k.key == "replicaSet" {
			assert.Equal(t, "replicaSetUID", k.attrSiblings.uid)
			assert.Equal(t, "namespace", k.attrSiblings.namespace)
			assert.True(t, k.subject)
		}
		if k.key == "related" {
			assert.False(t, k.subject)
		}
	}
}
