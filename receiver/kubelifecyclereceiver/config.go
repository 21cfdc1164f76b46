// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objspans"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient"
)

// Kind is a kind of object whose lifecycle the receiver traces.
type Kind string

// The kinds the receiver traces (design.md rules 1 and 7).
const (
	// KindPod traces Pods' starts from a Pod watch (node-scoped with node_name).
	KindPod Kind = "Pod"
	// KindDeployment traces Deployment rollouts from the Events kube_events hands
	// trace_context's hub and GETs of the Deployments and ReplicaSets they name: in the events
	// collector, beside kube_events, never in a node agent.
	KindDeployment Kind = "Deployment"
)

// UnmarshalText accepts only the kinds the receiver traces, so a typo fails when the
// configuration is read.
func (k *Kind) UnmarshalText(text []byte) error {
	switch v := Kind(text); v {
	case KindPod, KindDeployment:
		*k = v
		return nil
	}
	return fmt.Errorf("%q: must be Pod or Deployment", text)
}

// Config configures the kube_lifecycle receiver.
type Config struct {
	// Kubeconfig is a kubeconfig file; empty means the in-cluster service account.
	Kubeconfig string `mapstructure:"kubeconfig"`
	// Kinds lists what is traced: Pod, Deployment.
	Kinds []Kind `mapstructure:"kinds"`
	// NodeName scopes the Pod watch to one node (spec.nodeName field selector), as the
	// DaemonSet runs it. Empty watches every Pod of the cluster.
	NodeName string `mapstructure:"node_name"`
	// GiveUpAfter ends the trace of a Pod that has not reached its desired state this long
	// after its creation (outcome gave_up, design.md rule 4): far above scheduling and image
	// pull times, so a slow start is traced with its real duration.
	GiveUpAfter time.Duration `mapstructure:"give_up_after"`
	// RolloutTimeout ends the trace of a Deployment rollout that has not reached its desired
	// state this long after it began.
	RolloutTimeout time.Duration `mapstructure:"rollout_timeout"`
	// RolloutMaxReads bounds the reads of one rollout (a GET of the Deployment and of its
	// ReplicaSets not yet scaled down each, design.md rule 7); a rollout that spends them ends
	// at rollout_timeout.
	RolloutMaxReads int `mapstructure:"rollout_max_reads"`
	// MaxPending bounds the Pods, and separately the rollouts, held while they have not
	// reached their desired state.
	MaxPending int `mapstructure:"max_pending"`
	// TraceContext names a trace_context extension: a Pod without its own context continues
	// the trace of its nearest owner that has one. Optional.
	TraceContext *component.ID `mapstructure:"trace_context"`
	// PodMetadata names the pod_metadata extension (with pod_status: true) the Pods come
	// from: the node's one Pod watch serves this receiver too. Optional; without it the receiver
	// watches Pods itself (a cluster-wide replica).
	PodMetadata *component.ID `mapstructure:"pod_metadata"`
	// LeaderElection runs the watches only in the holder of a Lease, for a collector with
	// several replicas (the events Deployment).
	LeaderElection LeaderElectionConfig `mapstructure:"leader_election"`
	// Sampling chooses which traces are kept (design.md rule 11; the block kube_events reads
	// as spans.sampling).
	Sampling objspans.SamplingConfig `mapstructure:"sampling"`
	// SyncTimeout bounds the wait for the first list at start.
	SyncTimeout time.Duration `mapstructure:"sync_timeout"`
}

// LeaderElectionConfig names the coordination.k8s.io/v1 Lease the replicas share: the
// repository's one leader_election block (internal/kubeclient), shared with kube_events.
type LeaderElectionConfig = kubeclient.LeaderElectionConfig

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{
		Kinds: []Kind{KindPod}, GiveUpAfter: time.Hour, RolloutTimeout: time.Hour, RolloutMaxReads: 200, MaxPending: 10000,
		LeaderElection: kubeclient.NewDefaultLeaderElectionConfig("otelcol-k8s-lifecycle"), SyncTimeout: 30 * time.Second,
		Sampling: objspans.NewDefaultSamplingConfig(),
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Kinds) == 0 {
		errs = append(errs, errors.New("kinds: empty"))
	}
	for _, k := range c.Kinds {
		if k != KindPod && k != KindDeployment {
			errs = append(errs, fmt.Errorf("kinds: %q: must be Pod or Deployment", k))
		}
	}
	if c.NodeName != "" && c.traces(KindDeployment) {
		errs = append(errs, errors.New("kinds: Deployment follows the cluster's Events: not with node_name (run it in the events collector)"))
	}
	if c.traces(KindDeployment) && c.TraceContext == nil {
		errs = append(errs, errors.New("kinds: Deployment needs trace_context: rollouts follow the Events kube_events hands its hub"))
	}
	if c.traces(KindDeployment) && c.LeaderElection.Enabled {
		errs = append(errs, errors.New("leader_election: not with Deployment (rollouts follow kube_events' leadership)"))
	}
	if c.RolloutMaxReads <= 0 {
		errs = append(errs, fmt.Errorf("rollout_max_reads %d: must be positive", c.RolloutMaxReads))
	}
	if c.PodMetadata != nil && !c.traces(KindPod) {
		errs = append(errs, errors.New("pod_metadata: only Pods come from it; kinds must include Pod"))
	}
	if c.PodMetadata != nil && c.LeaderElection.Enabled {
		errs = append(errs, errors.New("leader_election: not with pod_metadata (a node's Pods are its own agent's)"))
	}
	if c.NodeName != "" && c.LeaderElection.Enabled {
		errs = append(errs, errors.New("leader_election: not with node_name (every node agent watches its own node)"))
	}
	if err := c.LeaderElection.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.GiveUpAfter <= 0 {
		errs = append(errs, fmt.Errorf("give_up_after %s: must be positive", c.GiveUpAfter))
	}
	if err := c.Sampling.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("sampling: %w", err))
	}
	if c.RolloutTimeout <= 0 {
		errs = append(errs, fmt.Errorf("rollout_timeout %s: must be positive", c.RolloutTimeout))
	}
	if c.MaxPending <= 0 {
		errs = append(errs, fmt.Errorf("max_pending %d: must be positive", c.MaxPending))
	}
	if c.SyncTimeout <= 0 {
		errs = append(errs, errors.New("sync_timeout: must be positive"))
	}
	return errors.Join(errs...)
}

func (c *Config) traces(k Kind) bool { return slices.Contains(c.Kinds, k) }
