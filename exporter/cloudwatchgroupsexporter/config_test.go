// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/routing"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cfg, err := unmarshalConfig(t, name)
	require.NoError(t, err)
	return cfg
}

// unmarshalConfig reads the named configuration of testdata/config.yaml over the defaults.
func unmarshalConfig(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	id := component.NewID(metadata.Type)
	if name != "" {
		id = component.NewIDWithName(metadata.Type, name)
	}
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	return cfg, sub.Unmarshal(cfg)
}

func TestLoadConfig(t *testing.T) {
	def := loadConfig(t, "")
	require.NoError(t, confmap.Validate(def))
	assert.Equal(t, "us-east-1", def.Region)
	assert.Equal(t, GroupByLogType, def.GroupBy)
	assert.Equal(t, MessageFormatJSON, def.MessageFormat)
	assert.Zero(t, def.BackOffConfig.MaxElapsedTime, "retry until delivered")
	assert.Equal(t, "otelcol_k8s.log.type", def.LogType.Attribute)
	assert.Empty(t, def.RecordAttributes)
	assert.True(t, def.QueueConfig.HasValue())
	assert.True(t, def.QueueConfig.Get().Batch.HasValue())

	all := loadConfig(t, "all")
	require.NoError(t, confmap.Validate(all))
	assert.Equal(t, GroupByNamespaceUID, all.GroupBy)
	assert.Equal(t, []string{"k8s.pod.label.log-group", "team"}, all.GroupByOptional)
	assert.Equal(t, "/", all.GroupSeparator)
	assert.Equal(t, []string{"log.file.path"}, all.RecordAttributes)
	assert.Equal(t, []routing.Matcher{{Key: "log.file.path", Pattern: "/var/log/kube-apiserver/audit*.log"}}, all.LogType.AuditMatchers)
	assert.Equal(t, int32(30), all.RetentionDays)
	assert.Equal(t, map[string]string{"team": "platform", "env": "prod"}, all.Tags)
	assert.Equal(t, "INFREQUENT_ACCESS", all.LogGroupClass)
	assert.True(t, all.ApplySettingsToExistingGroups)
	assert.False(t, def.ApplySettingsToExistingGroups, "settings from the creating process only")
	assert.Equal(t, OversizeSplit, all.Oversize)
	assert.Equal(t, 2*time.Minute, all.TimeoutConfig.Timeout)
	assert.Equal(t, 10*time.Minute, all.BackOffConfig.MaxElapsedTime)
	q := all.QueueConfig.Get()
	require.NotNil(t, q.StorageID)
	assert.Equal(t, "file_storage", q.StorageID.String())
	assert.Equal(t, int64(2097152), q.Batch.Get().MinSize)
}

func TestInvalidConfigs(t *testing.T) {
	tests := map[string]string{
		"bad_group_by":           "group_by",
		"bad_retention":          "retention_days",
		"bad_class":              "log_group_class",
		"bad_prefix":             "group_prefix",
		"bad_format":             "message_format",
		"bad_event_size":         "max_event_bytes",
		"bad_oversize":           "oversize",
		"bad_matcher":            "matchers",
		"bad_template":           "stream_name_template",
		"bad_rates":              "create_log_stream_rate",
		"bad_tags":               "aws:reserved",
		"bad_endpoint":           "endpoint",
		"bad_warn_after":         "delivery_warn_after",
		"bad_delivery_retention": "DELIVERY",
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			// Enum values are checked when read (UnmarshalText), the rest by Validate; both
			// errors name the YAML key.
			cfg, err := unmarshalConfig(t, name)
			if err == nil {
				err = confmap.Validate(cfg)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), want, "error %q does not mention %q", err, want)
		})
	}
}
