// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// Form is how a recognized reference is rewritten under its own key.
type Form string

// Forms.
const (
	// FormString writes "namespace/name" ("name" for cluster-scoped objects,
	// "namespace/name:port" for kube-proxy's service ports); a list key gets a list of them.
	FormString Form = "string"
	// FormMap writes a map with name, namespace and whatever else the reference stated; a list
	// key gets a list of them.
	FormMap Form = "map"
)

// UnmarshalText accepts only the known forms (empty: the default, string), so a typo fails
// when the configuration is read.
func (f *Form) UnmarshalText(text []byte) error {
	switch v := Form(text); v {
	case "", FormString, FormMap:
		*f = v
		return nil
	}
	return fmt.Errorf("%q is not one of %q, %q", text, FormString, FormMap)
}

// Config is the object_ref processor configuration. The zero value of every field but Match
// means the built-in behavior, which needs no configuration for Kubernetes components' logs.
type Config struct {
	// Match declares which records are Kubernetes component logs; no other record is touched.
	Match MatchConfig `mapstructure:"match"`
	// Form is the form recognized references are rewritten to: string (default) or map. Every
	// reference key gets that form, whatever form it came in.
	Form Form `mapstructure:"form"`
	// Body also looks for references among the top-level keys of a map body.
	Body bool `mapstructure:"body"`
	// BodyField, with Body, looks in the map under this top-level body key instead, such as
	// "object" for events collected in watch mode ({"type": "ADDED", "object": {...}}).
	BodyField string `mapstructure:"body_field"`
	// KeyPrefix is prepended to every key of the key table and to their sibling keys, to match
	// klog_parser's attributes_prefix. It does not apply to the body.
	KeyPrefix string `mapstructure:"key_prefix"`
	// Keys adds key-table entries or overrides built-in ones with the same key. They come
	// before the built-in entries, in this order, which decides the record's subject.
	Keys []KeyConfig `mapstructure:"keys"`
	// ExcludeKeys removes built-in key-table entries.
	ExcludeKeys []string `mapstructure:"exclude_keys"`
	// Kinds adds kinds (custom resources) to the kind table.
	Kinds []KindConfig `mapstructure:"kinds"`
	// TraceContext names an extension that gives the trace context of a Kubernetes object;
	// when set, records take the trace and span ids of the objects they name.
	TraceContext *component.ID `mapstructure:"trace_context"`
	// OwnPod, with trace_context, gives a record that names no object with a context the
	// context of the Pod that wrote it (the resource's k8s.pod.uid, else its namespace and
	// name), which is its own or its nearest traced owner's: a traced Deployment's Pods' lines
	// carry its trace id. Looked up once per resource, not per record.
	OwnPod bool `mapstructure:"own_pod"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// MatchConfig declares the records the processor acts on. A record is acted on when any
// configured condition holds.
type MatchConfig struct {
	// Klog matches records klog_parser recognized as klog (text, or JSON with klog's own keys):
	// those with the otelcol_k8s.klog.format attribute. Default true.
	Klog bool `mapstructure:"klog"`
	// Namespaces matches records whose resource k8s.namespace.name is listed (kube-system).
	Namespaces []string `mapstructure:"namespaces"`
	// Containers matches records whose resource k8s.container.name is listed.
	Containers []string `mapstructure:"containers"`
	// All matches every record: for pipelines that carry only Kubernetes objects, such as
	// events collected by another receiver.
	All bool `mapstructure:"all"`
}

// KeyConfig is one key-table entry: an attribute key that holds a reference and where its kind
// comes from. With neither Kind nor KindKey, the kind is the one the reference states (a map's
// "kind" field, as in event regarding/related).
type KeyConfig struct {
	// Key is the attribute key, matched exactly.
	Key string `mapstructure:"key"`
	// Kind is the kind the key always names, such as Pod.
	Kind string `mapstructure:"kind"`
	// KindKey is a sibling attribute holding the kind, such as "kind" next to "object".
	KindKey string `mapstructure:"kind_key"`
	// NamespaceKey is the sibling attribute giving the namespace of a bare name.
	// Default "namespace"; empty for none.
	NamespaceKey *string `mapstructure:"namespace_key"`
	// UIDKey is the sibling attribute giving the uid. Default: the key followed by "UID"
	// (podUID); empty for none.
	UIDKey *string `mapstructure:"uid_key"`
	// Subject says whether the reference may be the record's subject. Default true (false for
	// lists).
	Subject *bool `mapstructure:"subject"`
	// List says the key holds a list of references (klog.KObjSlice).
	List bool `mapstructure:"list"`
}

// KindConfig is one kind-table entry for a kind the built-in table does not know.
type KindConfig struct {
	// Kind is the API kind, such as Certificate.
	Kind string `mapstructure:"kind"`
	// APIVersion is the kind's group/version, such as cert-manager.io/v1.
	APIVersion string `mapstructure:"api_version"`
	// Namespaced says whether objects of the kind live in a namespace.
	Namespaced bool `mapstructure:"namespaced"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (cfg *Config) Validate() error {
	var errs []error
	switch cfg.Form {
	case "", FormString, FormMap:
	default:
		errs = append(errs, fmt.Errorf("form: %q is not one of %q, %q", cfg.Form, FormString, FormMap))
	}
	if cfg.OwnPod && cfg.TraceContext == nil {
		errs = append(errs, errors.New("own_pod needs trace_context"))
	}
	if cfg.BodyField != "" && !cfg.Body {
		errs = append(errs, errors.New("body_field needs body: true"))
	}
	m := cfg.Match
	if !m.Klog && !m.All && len(m.Namespaces) == 0 && len(m.Containers) == 0 {
		errs = append(errs, errors.New("match: matches no record; set klog, namespaces, containers or all"))
	}
	seenKind := map[string]bool{}
	for i, k := range cfg.Kinds {
		if k.Kind == "" {
			errs = append(errs, fmt.Errorf("kinds[%d]: kind is required", i))
		} else if seenKind[k.Kind] {
			errs = append(errs, fmt.Errorf("kinds[%d]: kind %q is listed twice", i, k.Kind))
		}
		seenKind[k.Kind] = true
		if k.APIVersion == "" {
			errs = append(errs, fmt.Errorf("kinds[%d]: api_version is required (group/version)", i))
		}
	}
	seenKey := map[string]bool{}
	for i, k := range cfg.Keys {
		switch {
		case k.Key == "":
			errs = append(errs, fmt.Errorf("keys[%d]: key is required", i))
		case seenKey[k.Key]:
			errs = append(errs, fmt.Errorf("keys[%d]: key %q is listed twice", i, k.Key))
		case attr.Reserved(cfg.KeyPrefix + k.Key):
			errs = append(errs, fmt.Errorf("keys[%d]: key %q is a reserved attribute name", i, cfg.KeyPrefix+k.Key))
		}
		seenKey[k.Key] = true
		if k.Kind != "" && k.KindKey != "" {
			errs = append(errs, fmt.Errorf("keys[%d]: kind and kind_key are exclusive", i))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	// Unknown kinds are reported by the table builder, which knows the built-in kinds.
	_, err := buildTable(cfg)
	return err
}

func (cfg *Config) form() Form {
	if cfg.Form == "" {
		return FormString
	}
	return cfg.Form
}
