// SPDX-License-Identifier: Apache-2.0

package tracecontext

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// Config configures the trace_context extension.
type Config struct {
	// Kubeconfig is a kubeconfig file; empty means the in-cluster service account.
	Kubeconfig string `mapstructure:"kubeconfig"`
	// NodeName, when set, scopes the extension to one node: Pods on that node are watched and
	// their owners fetched on demand. Empty watches every configured kind cluster-wide.
	NodeName string `mapstructure:"node_name"`
	// Resources are the kinds whose objects' contexts are kept.
	Resources []Resource `mapstructure:"resources"`
	// MaxObjects bounds the objects held.
	MaxObjects int `mapstructure:"max_objects"`
	// OwnerTTL is how long an owner fetched in node scope is trusted before the next Pod naming
	// it fetches it again.
	OwnerTTL time.Duration `mapstructure:"owner_ttl"`
	// SyncTimeout bounds the wait for the watches' first lists at start.
	SyncTimeout time.Duration `mapstructure:"sync_timeout"`
}

// Resource is one kind by group/version/resource, with its Kind (as owner references and log
// lines name it).
type Resource struct {
	Group    string `mapstructure:"group"`
	Version  string `mapstructure:"version"`
	Resource string `mapstructure:"resource"`
	Kind     string `mapstructure:"kind"`
}

var _ component.Config = (*Config)(nil)

// defaultResources are the workload kinds whose controllers propagate contexts, with their
// group, version and resource from the object model's one kind table.
func defaultResources() []Resource {
	kinds := []string{"Pod", "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"}
	out := make([]Resource, 0, len(kinds))
	for _, kind := range kinds {
		k := objref.Builtin().Lookup("", kind)
		out = append(out, Resource{Group: k.Group, Version: k.Version, Resource: k.Resource, Kind: k.Kind})
	}
	return out
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Resources) == 0 {
		errs = append(errs, errors.New("resources: at least one is needed"))
	}
	seen := map[string]bool{}
	for i, r := range c.Resources {
		if r.Version == "" || r.Resource == "" || r.Kind == "" {
			errs = append(errs, fmt.Errorf("resources[%d]: version, resource and kind are required", i))
		}
		k := r.Group + "/" + r.Kind
		if seen[k] {
			errs = append(errs, fmt.Errorf("resources[%d]: kind %s of group %q listed twice", i, r.Kind, r.Group))
		}
		seen[k] = true
	}
	if c.NodeName != "" && !seen["/Pod"] {
		errs = append(errs, errors.New("node_name: node scope watches Pods; resources must include pods"))
	}
	if c.MaxObjects <= 0 {
		errs = append(errs, fmt.Errorf("max_objects %d: must be positive", c.MaxObjects))
	}
	if c.OwnerTTL <= 0 {
		errs = append(errs, fmt.Errorf("owner_ttl %s: must be positive", c.OwnerTTL))
	}
	if c.SyncTimeout <= 0 {
		errs = append(errs, fmt.Errorf("sync_timeout %s: must be positive", c.SyncTimeout))
	}
	return errors.Join(errs...)
}
