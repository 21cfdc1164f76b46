// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objspans"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	ext := component.MustNewID("trace_context")
	pods := component.MustNewID("pod_metadata")
	tests := []struct {
		id      string
		want    *Config
		wantErr string
	}{
		{id: "kube_lifecycle", want: createDefaultConfig().(*Config)},
		{id: "kube_lifecycle/node", want: &Config{
			Kubeconfig: "/etc/kube/config", Kinds: []Kind{KindPod}, NodeName: "node-1", GiveUpAfter: 2 * time.Hour, RolloutTimeout: time.Hour,
			RolloutMaxReads: 200, MaxPending: 500, TraceContext: &ext, PodMetadata: &pods, LeaderElection: kubeclient.NewDefaultLeaderElectionConfig("otelcol-k8s-lifecycle"), SyncTimeout: 10 * time.Second,
			Sampling: objspans.SamplingConfig{Ratio: 0.25, Kinds: map[string]float64{"Pod": 0.5}, OnlyWithContext: true},
		}},
		{id: "kube_lifecycle/cluster", want: &Config{
			Kinds: []Kind{KindDeployment}, GiveUpAfter: time.Hour, RolloutTimeout: 30 * time.Minute, RolloutMaxReads: 50, MaxPending: 10000,
			TraceContext: &ext, LeaderElection: kubeclient.NewDefaultLeaderElectionConfig("otelcol-k8s-lifecycle"),
			SyncTimeout: 30 * time.Second, Sampling: objspans.NewDefaultSamplingConfig(),
		}},
		{id: "kube_lifecycle/rollouts_leader", wantErr: "kinds: Deployment needs trace_context: rollouts follow the Events kube_events hands its hub\n" +
			"leader_election: not with Deployment (rollouts follow kube_events' leadership)"},
		{id: "kube_lifecycle/pod_metadata_rollouts", wantErr: "pod_metadata: only Pods come from it; kinds must include Pod"},
		{id: "kube_lifecycle/bad", wantErr: "give_up_after 0s: must be positive\nsampling: ratio 2: must be between 0 and 1\nmax_pending 0: must be positive"},
		{id: "kube_lifecycle/bad_kind", wantErr: "decoding failed due to the following error(s):\n\n'kinds[1]' \"Job\": must be Pod or Deployment"},
		{id: "kube_lifecycle/node_rollouts", wantErr: "kinds: Deployment follows the cluster's Events: not with node_name (run it in the events collector)\n" +
			"kinds: Deployment needs trace_context: rollouts follow the Events kube_events hands its hub\n" +
			"leader_election: not with Deployment (rollouts follow kube_events' leadership)\n" +
			"leader_election: not with node_name (every node agent watches its own node)\n" +
			"leader_election.lease_name must be set"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id)
			require.NoError(t, err)
			// Kinds are checked when read (UnmarshalText), the rest by Validate; both errors
			// name the YAML key.
			err = sub.Unmarshal(cfg)
			if err == nil {
				err = cfg.(*Config).Validate()
			}
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg)
		})
	}
}
