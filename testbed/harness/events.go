// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ShippedEventsConfigMap is the cluster events collector's ConfigMap, relative to the
// repository root: the configuration the events Deployment runs (tracing off, the default).
const ShippedEventsConfigMap = "deploy/kubernetes/events-configmap.yaml"

// ShippedTracesEventsConfigMap is the events collector's ConfigMap of the traces set (the chart
// rendered with traces.enabled): kube_events' spans and kube_lifecycle's rollout traces.
const ShippedTracesEventsConfigMap = "deploy/kubernetes/traces/events-configmap.yaml"

// EventsLocal says where a local run puts what a cluster gives the events Deployment.
type EventsLocal struct {
	// Kubeconfig replaces the in-cluster service account (the local API server) of kube_events
	// and, when the configuration has them, kube_lifecycle and trace_context.
	Kubeconfig string
	// Endpoint is the CloudWatch Logs endpoint URL set on every cloudwatch_groups exporter.
	Endpoint string
	// TracesEndpoint replaces the traces endpoint of every otlp_http exporter (a local OTLP/HTTP
	// server, full URL with its path); required when the configuration has one.
	TracesEndpoint string
	// HealthAddr replaces the health_check endpoint.
	HealthAddr string
	// MetricsAddr, when set, is where the collector's own metrics are served at the shipped
	// level (as Local.MetricsAddr); empty turns them off.
	MetricsAddr string
	// Env gives the values the Deployment's environment provides (POD_NAME, AWS_REGION, ...).
	// The Go runtime's variables the Deployment sets (GOMAXPROCS, GOMEMLIMIT) are taken from
	// the Deployment beside the ConfigMap unless Env sets them.
	Env map[string]string
	// Series, when set, is kube_events' series section (shorter timers, so a scenario sees a
	// legacy series finish by silence in seconds instead of 15 minutes). The shipped file
	// sets none: it keeps the receiver's defaults.
	Series map[string]any
}

// LoadShippedEventsConfig reads the events collector's configuration from the ConfigMap at
// configMapPath and returns it with only endpoints swapped for a local run: the API server
// (kubeconfig), CloudWatch, the traces endpoint, the health address, and the service's own
// metrics (moved to MetricsAddr, or off without it: several collectors share one machine).
// Everything else stays as shipped.
func LoadShippedEventsConfig(configMapPath string, l EventsLocal) (*Shipped, error) {
	if l.Kubeconfig == "" || l.Endpoint == "" || l.HealthAddr == "" {
		return nil, errors.New("events config: the kubeconfig, CloudWatch endpoint and health address are required")
	}
	text, cfg, err := readConfigMap(configMapPath)
	if err != nil {
		return nil, err
	}
	s := &Shipped{}
	var errs []error
	set := func(kind, typ, key string, value any, what string) {
		sec, _ := cfg[kind].(map[string]any)
		n := 0
		for id, v := range sec {
			if id != typ && !strings.HasPrefix(id, typ+"/") {
				continue
			}
			c, _ := v.(map[string]any)
			if c == nil {
				c = map[string]any{}
				sec[id] = c
			}
			c[key] = value
			s.note("%s::%s::%s = %s", kind, id, key, what)
			n++
		}
		if n == 0 {
			errs = append(errs, fmt.Errorf("no %s %s: the loader does not know this configuration's shape", typ, kind))
		}
	}
	set("receivers", "kube_events", "kubeconfig", l.Kubeconfig, "the local API server")
	if recvs, _ := cfg["receivers"].(map[string]any); slices.ContainsFunc(slices.Collect(maps.Keys(recvs)), func(id string) bool { return isType(id, kubeReceivers) }) {
		set("receivers", "kube_lifecycle", "kubeconfig", l.Kubeconfig, "the local API server")
	}
	if exts, _ := cfg["extensions"].(map[string]any); slices.ContainsFunc(slices.Collect(maps.Keys(exts)), func(id string) bool { return isType(id, []string{"trace_context"}) }) {
		set("extensions", "trace_context", "kubeconfig", l.Kubeconfig, "the local API server")
	}
	set("exporters", "cloudwatch_groups", "endpoint", l.Endpoint, "the local CloudWatch Logs server")
	if exps, _ := cfg["exporters"].(map[string]any); slices.ContainsFunc(slices.Collect(maps.Keys(exps)), func(id string) bool { return isType(id, []string{"otlp_http"}) }) {
		if l.TracesEndpoint == "" {
			errs = append(errs, errors.New("an otlp_http exporter (tracing on) needs TracesEndpoint"))
		}
		set("exporters", "otlp_http", "traces_endpoint", l.TracesEndpoint, "a local OTLP/HTTP server")
	}
	set("extensions", "health_check", "endpoint", l.HealthAddr, "a free local port")
	if l.Series != nil {
		set("receivers", "kube_events", "series", l.Series, fmt.Sprintf("%v (compressed timers)", l.Series))
	}
	if service, _ := cfg["service"].(map[string]any); service == nil {
		errs = append(errs, errors.New("no service section"))
	} else if err := s.localizeMetrics(service, l.MetricsAddr); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%s: %w", configMapPath, err)
	}
	if s.Env, err = envFor(text, l.Env); err != nil {
		return nil, fmt.Errorf("%s: %w", configMapPath, err)
	}
	// The Go runtime's settings of the Deployment beside the ConfigMap (GOMAXPROCS,
	// GOMEMLIMIT) go with it: they change how the collector runs, not where it sends.
	deployment := filepath.Join(filepath.Dir(configMapPath), filepath.Base(ShippedEventsDeployment))
	runtimeEnv, err := ShippedEventsEnv(deployment)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(runtimeEnv)) {
		if _, set := l.Env[k]; strings.HasPrefix(k, "GO") && !set {
			s.Env = append(s.Env, k+"="+runtimeEnv[k])
			s.note("environment %s=%s, as %s sets it", k, runtimeEnv[k], deployment)
		}
	}
	if s.YAML, err = yaml.Marshal(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// readConfigMap reads the collector configuration in a ConfigMap's data.config.yaml: its text
// and its parsed form.
func readConfigMap(configMapPath string) (string, map[string]any, error) {
	raw, err := os.ReadFile(configMapPath)
	if err != nil {
		return "", nil, err
	}
	var cm struct {
		Kind string            `yaml:"kind"`
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		return "", nil, fmt.Errorf("%s: %w", configMapPath, err)
	}
	text, ok := cm.Data["config.yaml"]
	if cm.Kind != "ConfigMap" || !ok {
		return "", nil, fmt.Errorf("%s: not a ConfigMap with a config.yaml key", configMapPath)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		return "", nil, fmt.Errorf("%s: config.yaml: %w", configMapPath, err)
	}
	return text, cfg, nil
}
