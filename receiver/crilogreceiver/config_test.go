// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	storageID := component.MustNewIDWithName("file_storage", "cri")
	custom := createDefaultConfig().(*Config)
	custom.Include = []string{"/var/log/pods/*/*/*.log", "/var/log/containers/*.log"}
	custom.Exclude = []string{"/var/log/pods/kube-system_*/*/*.log"}
	custom.StartAt = StartAtBeginning
	custom.PollInterval = 100 * time.Millisecond
	custom.DiscoveryInterval = time.Second
	custom.DrainGrace = 10 * time.Second
	custom.CheckpointInterval = 500 * time.Millisecond
	custom.MaxConcurrentFiles = 512
	custom.MaxBytesPerPoll = 256 << 10
	custom.MaxLogSize = 2 << 20
	custom.FlushTimeout = 2 * time.Second
	custom.FingerprintSize = 500
	custom.IncludeFilePath = true
	custom.Storage = &storageID
	custom.Multiline = MultilineConfig{
		Preset: PresetKlog, FlushTimeout: 300 * time.Millisecond,
		Include: []string{"/var/log/pods/kube-system_*/*/*.log"},
	}
	custom.RetryOnFailure = RetryConfig{InitialInterval: 50 * time.Millisecond, MaxInterval: 10 * time.Second}
	auto := createDefaultConfig().(*Config)
	auto.Multiline.Preset = PresetAuto
	pattern := createDefaultConfig().(*Config)
	pattern.Multiline.LineStartPattern = `^\d{4}-\d{2}-\d{2}`

	podsID := component.MustNewID("pod_metadata")
	pods := createDefaultConfig().(*Config)
	pods.PodMetadata = &podsID
	pods.MetadataWait = 5 * time.Second
	pods.Namespaces = NamespaceFilter{Include: []string{"shop", "team-*"}, Exclude: []string{"team-sandbox"}}
	pods.Extract = ExtractConfig{
		Metadata: []string{"k8s.node.name", "k8s.deployment.name"},
		Labels: []FieldExtractConfig{
			{Key: "app.kubernetes.io/name"},
			{Key: "tier", From: "namespace", TagName: "tier"},
		},
		Annotations: []FieldExtractConfig{{Key: "owner"}},
	}

	tests := []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: createDefaultConfig().(*Config)},
		{name: "custom", want: custom},
		{name: "pattern", want: pattern},
		{name: "auto", want: auto},
		{name: "bad_start_at", wantErr: "'start_at' \"middle\" is neither"},
		{name: "bad_both_multiline", wantErr: "not both"},
		{name: "bad_pattern", wantErr: "line_start_pattern"},
		{name: "bad_preset", wantErr: "'multiline.preset' unknown preset"},
		{name: "bad_sizes", wantErr: "max_log_size"},
		{name: "bad_intervals", wantErr: "poll_interval must be positive"},
		{name: "bad_glob", wantErr: "include: bad glob pattern"},
		{name: "bad_multiline_glob", wantErr: "multiline.include: bad glob pattern"},
		{name: "no_include", wantErr: "include"},
		{name: "pods", want: pods},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.name).String())
			require.NoError(t, err)
			// Enum values are checked when read (UnmarshalText), the rest by Validate; both
			// errors name the YAML key.
			err = sub.Unmarshal(cfg)
			if err == nil {
				err = cfg.(*Config).Validate()
			}
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg)
		})
	}
}

// TestBadExtract: every mistake is named by its key, all at once.
func TestBadExtract(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, "bad_extract").String())
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	err = cfg.Validate()
	for _, want := range []string{
		`namespaces.exclude: bad glob pattern "["`,
		"metadata_wait must be between 0s and 1m",
		`extract.metadata[0]: "k8s.pod.start_time" is not supported`,
		"extract.labels[0]: key is required",
		`extract.labels[0]: from "node": must be pod or namespace`,
		`extract.annotations[0]: from "namespace" is not supported (pod only)`,
		"extract: labels and annotations need pod_metadata",
	} {
		assert.ErrorContains(t, err, want)
	}
}
