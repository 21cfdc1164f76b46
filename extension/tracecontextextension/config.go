// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// Mode says how the extension learns the objects it answers for (design.md rule 11).
type Mode string

// Modes.
const (
	// ModeWatch watches (cluster-wide, or the node's Pods in node scope): the default.
	ModeWatch Mode = "watch"
	// ModeLookup opens no watch: an object asked about through FetchSpanContextForObject is read
	// with a metadata GET, with its owners, once per uid and owner_ttl.
	ModeLookup Mode = "lookup"
)

// UnmarshalText accepts the modes by name.
func (m *Mode) UnmarshalText(b []byte) error {
	switch v := Mode(b); v {
	case ModeWatch, ModeLookup:
		*m = v
		return nil
	default:
		return fmt.Errorf("mode: %q is not watch or lookup", string(b))
	}
}

// Config configures the trace_context extension.
type Config struct {
	// Mode is watch (the default) or lookup (no watch: objects asked about are fetched).
	Mode Mode `mapstructure:"mode"`
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
	// PodMetadata names the pod_metadata extension whose Pods are used in node scope instead of
	// a Pod watch of the extension's own (the node's one Pod watch). Optional, node scope only.
	PodMetadata *component.ID `mapstructure:"pod_metadata"`
	// Trust limits whose contexts are used (design.md, "Threat model").
	Trust TrustConfig `mapstructure:"trust"`
}

// TrustConfig says which objects' trace contexts the collector joins. A context on another
// object is ignored (the object is held as carrying none) and counted. Empty lists trust all.
type TrustConfig struct {
	// Namespaces whose objects' contexts are used.
	Namespaces []string `mapstructure:"namespaces"`
	// Kinds (as in resources) whose objects' contexts are used.
	Kinds []string `mapstructure:"kinds"`
}

// trusts reports whether a context on an object of kind in namespace is used.
func (t *TrustConfig) trusts(kind, namespace string) bool {
	return (len(t.Namespaces) == 0 || slices.Contains(t.Namespaces, namespace)) &&
		(len(t.Kinds) == 0 || slices.Contains(t.Kinds, kind))
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
	switch c.Mode {
	case ModeWatch:
	case ModeLookup:
		if c.NodeName != "" {
			errs = append(errs, errors.New("mode: lookup fetches the objects asked about; it has no node scope (unset node_name)"))
		}
	default:
		errs = append(errs, fmt.Errorf("mode: %q is not watch or lookup", string(c.Mode)))
	}
	if c.PodMetadata != nil && c.NodeName == "" {
		errs = append(errs, errors.New("pod_metadata: node scope only (set node_name)"))
	}
	kinds := map[string]bool{}
	for _, r := range c.Resources {
		kinds[r.Kind] = true
	}
	for _, k := range c.Trust.Kinds {
		if !kinds[k] {
			errs = append(errs, fmt.Errorf("trust: kinds: %q is not a kind of resources", k))
		}
	}
	for _, ns := range c.Trust.Namespaces {
		if ns == "" {
			errs = append(errs, errors.New("trust: namespaces: empty name (cluster-scoped objects carry no context the collector joins)"))
		}
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
