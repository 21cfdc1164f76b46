// SPDX-License-Identifier: Apache-2.0

package klogparserprocessor

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	tests := []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: createDefaultConfig().(*Config)},
		{name: "all", want: &Config{
			SourceAttribute: "log.original", Formats: []Format{"text"}, KeepOriginal: true,
			OriginalAttribute: "klog.line", AttributesPrefix: "klog.kv.", Timezone: "Europe/Berlin",
			YearFrom: "observed_timestamp",
		}},
		{name: "bad_format", wantErr: `'formats[1]' unknown format "logfmt"`},
		{name: "no_format", wantErr: "formats: at least one"},
		{name: "bad_zone", wantErr: "timezone: unknown time zone Mars/Olympus_Mons"},
		{name: "bad_year", wantErr: `'year_from' unknown value "header"`},
		{name: "no_original_attribute", wantErr: "original_attribute: must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := component.NewID(metadata.Type)
			if tt.name != "" {
				id = component.NewIDWithName(metadata.Type, tt.name)
			}
			sub, err := cm.Sub(id.String())
			require.NoError(t, err)
			cfg := createDefaultConfig()
			// Enum values are checked when read (UnmarshalText), the rest by Validate; both
			// errors name the YAML key.
			err = sub.Unmarshal(cfg)
			if err == nil {
				err = confmap.Validate(cfg)
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
