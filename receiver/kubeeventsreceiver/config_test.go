// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	storage := component.MustNewID("file_storage")
	full := createDefaultConfig().(*Config)
	full.Kubeconfig = "/etc/kube/config"
	full.API = APIEventsV1
	full.Namespaces = []string{"shop", "billing"}
	full.FieldSelector = "type=Warning"
	full.Include = Filter{Types: []string{"Warning"}}
	full.Exclude = Filter{Reasons: []string{"Pulled"}}
	full.ClusterName = "prod"
	full.Series.Emit = []string{StateStart, StateFinished}
	full.Series.FinishAfter = 10 * time.Minute
	full.Series.HeartbeatTimeout = 45 * time.Minute
	full.Series.MaxOpen = 2000
	full.Storage = &storage
	full.LeaderElection.Enabled = true
	full.LeaderElection.LeaseName = "events"
	full.LeaderElection.LeaseNamespace = "observability"
	full.Client.QPS, full.Client.Burst, full.Client.PageSize = 2, 4, 100
	traceContext := component.MustNewID("trace_context")
	full.TraceContext = &traceContext
	full.Spans.Mode = SpanModeLink
	full.Spans.QueueSize = 500
	full.Checkpoint.Interval = 2 * time.Second
	full.ConsumerRetry = BackoffConfig{InitialInterval: 500 * time.Millisecond, MaxInterval: 10 * time.Second}

	tests := []struct {
		id      string
		want    *Config
		wantErr string
	}{
		{id: "", want: createDefaultConfig().(*Config)},
		{id: "full", want: full},
		{id: "bad_api", wantErr: `'api' "v2" is not auto`},
		{id: "bad_emit", wantErr: `series.emit: unknown state "started"`},
		{id: "bad_heartbeat", wantErr: "series.heartbeat_timeout must exceed series.finish_window"},
		{id: "bad_lease", wantErr: "lease_duration > renew_deadline > retry_period"},
		{id: "bad_span_mode", wantErr: `'spans.mode' "child" is not parent or link`},
		{id: "bad_checkpoint", wantErr: "checkpoint.interval must be positive"},
		{id: "bad_consumer_retry", wantErr: "consumer_retry.max_interval must not be below initial_interval"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			id := component.NewIDWithName(metadata.Type, tt.id)
			sub, err := cm.Sub(id.String())
			require.NoError(t, err)
			cfg := createDefaultConfig()
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
			assert.Equal(t, tt.want, cfg)
		})
	}
}
