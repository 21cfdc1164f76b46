// SPDX-License-Identifier: Apache-2.0

package podmetadataextension

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Config configures the pod_metadata extension.
type Config struct {
	// Kubeconfig is a kubeconfig file; empty means the in-cluster service account.
	Kubeconfig string `mapstructure:"kubeconfig"`
	// NodeName is the node whose Pods are watched (spec.nodeName); required.
	NodeName string `mapstructure:"node_name"`
	// MaxPods bounds the Pods held (a node runs at most a few hundred).
	MaxPods int `mapstructure:"max_pods"`
	// MaxOwners bounds the owners (ReplicaSets, Jobs) whose parent is cached.
	MaxOwners int `mapstructure:"max_owners"`
	// MaxNamespaces bounds the namespaces cached.
	MaxNamespaces int `mapstructure:"max_namespaces"`
	// OwnerTTL is how long a looked-up owner is trusted before a Pod naming it looks it up again.
	OwnerTTL time.Duration `mapstructure:"owner_ttl"`
	// NamespaceTTL is how long a looked-up namespace (its labels) is trusted.
	NamespaceTTL time.Duration `mapstructure:"namespace_ttl"`
	// ExcludeNamespaceLabel is the namespace label that, set to "true", opts every Pod of the
	// namespace out of log collection. Empty turns the namespace opt-out off.
	ExcludeNamespaceLabel string `mapstructure:"exclude_namespace_label"`
	// LookupTimeout bounds one owner or namespace GET.
	LookupTimeout time.Duration `mapstructure:"lookup_timeout"`
	// SyncTimeout bounds the wait for the Pod watch's first list at start.
	SyncTimeout time.Duration `mapstructure:"sync_timeout"`
	// PodStatus watches whole Pods instead of their metadata, and keeps of each its status
	// trimmed to the phase, the conditions and the containers' states (podmeta.Status), for
	// components that need it (kube_lifecycle). Still one watch, of this node's Pods.
	PodStatus bool `mapstructure:"pod_status"`
	// QPS and Burst are the client's rate limit toward the API server.
	QPS   float32 `mapstructure:"qps"`
	Burst int     `mapstructure:"burst"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if c.NodeName == "" {
		errs = append(errs, errors.New("node_name: required (the node whose Pods are watched; in a DaemonSet ${env:K8S_NODE_NAME})"))
	}
	for key, n := range map[string]int{"max_pods": c.MaxPods, "max_owners": c.MaxOwners, "max_namespaces": c.MaxNamespaces, "burst": c.Burst} {
		if n <= 0 {
			errs = append(errs, fmt.Errorf("%s %d: must be positive", key, n))
		}
	}
	for key, d := range map[string]time.Duration{
		"owner_ttl": c.OwnerTTL, "namespace_ttl": c.NamespaceTTL,
		"lookup_timeout": c.LookupTimeout, "sync_timeout": c.SyncTimeout,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s %s: must be positive", key, d))
		}
	}
	if c.QPS <= 0 {
		errs = append(errs, fmt.Errorf("qps %v: must be positive", c.QPS))
	}
	return errors.Join(errs...)
}
