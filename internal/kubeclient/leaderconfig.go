// SPDX-License-Identifier: Apache-2.0

package kubeclient

import (
	"errors"
	"time"
)

// LeaderElectionConfig is the `leader_election` block of every component that runs only in the
// holder of a Lease (kube_events, kube_lifecycle): one contract, one set of keys and checks.
type LeaderElectionConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// LeaseName is the Lease's name.
	LeaseName string `mapstructure:"lease_name"`
	// LeaseNamespace is the Lease's namespace; empty is the collector Pod's own.
	LeaseNamespace string `mapstructure:"lease_namespace"`
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's leader-election timers.
	LeaseDuration time.Duration `mapstructure:"lease_duration"`
	RenewDeadline time.Duration `mapstructure:"renew_deadline"`
	RetryPeriod   time.Duration `mapstructure:"retry_period"`
	// Identity is this replica's name in the Lease; empty is the host name (the Pod's name).
	Identity string `mapstructure:"identity"`
}

// NewDefaultLeaderElectionConfig is a disabled configuration on the Lease leaseName with
// client-go's default timers.
func NewDefaultLeaderElectionConfig(leaseName string) LeaderElectionConfig {
	return LeaderElectionConfig{
		LeaseName: leaseName, LeaseDuration: DefaultLeaseDuration, RenewDeadline: DefaultRenewDeadline, RetryPeriod: DefaultRetryPeriod,
	}
}

// Validate checks an enabled configuration; errors name the keys under leader_election.
func (c LeaderElectionConfig) Validate() error {
	if !c.Enabled {
		return nil
	}
	var errs []error
	if c.LeaseName == "" {
		errs = append(errs, errors.New("leader_election.lease_name must be set"))
	}
	if c.LeaseDuration <= c.RenewDeadline || c.RenewDeadline <= c.RetryPeriod || c.RetryPeriod <= 0 {
		errs = append(errs, errors.New("leader_election: lease_duration > renew_deadline > retry_period > 0 is required"))
	}
	return errors.Join(errs...)
}

// Lease is the Lease the configuration names, in namespace when it names none.
func (c LeaderElectionConfig) Lease(namespace string) Lease {
	if c.LeaseNamespace != "" {
		namespace = c.LeaseNamespace
	}
	return Lease{
		Name: c.LeaseName, Namespace: namespace, Identity: c.Identity,
		LeaseDuration: c.LeaseDuration, RenewDeadline: c.RenewDeadline, RetryPeriod: c.RetryPeriod,
	}
}
