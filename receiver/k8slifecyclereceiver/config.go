// SPDX-License-Identifier: Apache-2.0

package k8slifecyclereceiver

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Config configures the kube_lifecycle receiver.
type Config struct {
	// Kubeconfig is a kubeconfig file; empty means the in-cluster service account.
	Kubeconfig string `mapstructure:"kubeconfig"`
	// NodeName scopes the Pod watch to one node (spec.nodeName field selector), as the
	// DaemonSet runs it. Empty watches every Pod of the cluster.
	NodeName string `mapstructure:"node_name"`
	// Timeout ends the trace of a Pod that has not reached its desired state this long after
	// its creation.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxPending bounds the Pods held while they have not reached their desired state.
	MaxPending int `mapstructure:"max_pending"`
	// TraceContext names a trace_context extension: a Pod without its own context continues
	// the trace of its nearest owner that has one. Optional.
	TraceContext *component.ID `mapstructure:"trace_context"`
	// SyncTimeout bounds the wait for the first list at start.
	SyncTimeout time.Duration `mapstructure:"sync_timeout"`
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{Timeout: 10 * time.Minute, MaxPending: 10000, SyncTimeout: 30 * time.Second}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout %s: must be positive", c.Timeout))
	}
	if c.MaxPending <= 0 {
		errs = append(errs, fmt.Errorf("max_pending %d: must be positive", c.MaxPending))
	}
	if c.SyncTimeout <= 0 {
		errs = append(errs, errors.New("sync_timeout: must be positive"))
	}
	return errors.Join(errs...)
}
