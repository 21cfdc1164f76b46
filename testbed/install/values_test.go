// SPDX-License-Identifier: Apache-2.0

package install

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// valueProbe is a value, different from the default, that a key of values.yaml is set to;
// context, when set, is set in both renderings (a key that only matters once another is on).
type valueProbe struct{ set, context string }

// valueProbes names every documented value: each key of values.yaml (its leaves; an empty map or
// a list is a leaf) and each key of values.schema.json.
var valueProbes = map[string]valueProbe{
	"clusterName":                     {set: "clusterName: other-cluster"},
	"aws.region":                      {set: "aws: {region: us-west-2}"},
	"aws.existingSecret":              {set: "aws: {existingSecret: aws-credentials}"},
	"image.repository":                {set: "image: {repository: registry.example/otelcol-k8s}"},
	"image.tag":                       {set: "image: {tag: 9.9.9}"},
	"image.pullPolicy":                {set: "image: {pullPolicy: Always}"},
	"imagePullSecrets":                {set: "imagePullSecrets: [{name: regcred}]"},
	"namespace.create":                {set: "namespace: {create: true}"},
	"logGroups.groupBy":               {set: "logGroups: {groupBy: log_type}"},
	"logGroups.prefix":                {set: "logGroups: {prefix: /eks/prod}"},
	"logGroups.retentionDays":         {set: "logGroups: {retentionDays: 7}"},
	"logGroups.kmsKeyArn":             {set: `logGroups: {kmsKeyArn: "arn:aws:kms:eu-west-1:123456789012:key/k"}`},
	"logGroups.tags":                  {set: "logGroups: {tags: {team: logs}}"},
	"traces.enabled":                  {set: "traces: {enabled: true}"},
	"traces.endpoint":                 {set: "traces: {endpoint: \"https://vpce-1.xray.eu-west-1.vpce.amazonaws.com\"}", context: "traces: {enabled: true}"},
	"traces.otlp.enabled":             {set: "traces: {otlp: {enabled: false}}", context: "traces: {enabled: true}"},
	"traces.otlp.host":                {set: "traces: {otlp: {host: 0.0.0.0}}", context: "traces: {enabled: true}"},
	"traces.otlp.grpcPort":            {set: "traces: {otlp: {grpcPort: 14317}}", context: "traces: {enabled: true}"},
	"traces.otlp.httpPort":            {set: "traces: {otlp: {httpPort: 14318}}", context: "traces: {enabled: true}"},
	"traces.sampling.ratio":           {set: "traces: {sampling: {ratio: 0.1}}", context: "traces: {enabled: true}"},
	"traces.sampling.kinds":           {set: "traces: {sampling: {kinds: {Pod: 0.5}}}", context: "traces: {enabled: true}"},
	"traces.sampling.onlyWithContext": {set: "traces: {sampling: {onlyWithContext: true}}", context: "traces: {enabled: true}"},
	"traces.giveUpAfter":              {set: "traces: {giveUpAfter: 2h}", context: "traces: {enabled: true}"},
	"logs.namespaces.include":         {set: "logs: {namespaces: {include: [shop, \"team-*\"]}}"},
	"logs.namespaces.exclude":         {set: "logs: {namespaces: {exclude: [kube-node-lease]}}"},
	"metrics.port":                    {set: "metrics: {port: 9999}"},
	"metrics.level":                   {set: "metrics: {level: detailed}"},
	"metrics.service.enabled":         {set: "metrics: {service: {enabled: false}}"},
	"metrics.serviceMonitor.enabled":  {set: "metrics: {serviceMonitor: {enabled: true}}"},
	"metrics.serviceMonitor.interval": {set: "metrics: {serviceMonitor: {interval: 45s}}", context: "metrics: {serviceMonitor: {enabled: true}}"},
	"metrics.serviceMonitor.labels":   {set: "metrics: {serviceMonitor: {labels: {release: prom}}}", context: "metrics: {serviceMonitor: {enabled: true}}"},
	"metrics.podMonitor.enabled":      {set: "metrics: {podMonitor: {enabled: true}}"},
	"metrics.podMonitor.interval":     {set: "metrics: {podMonitor: {interval: 45s}}", context: "metrics: {podMonitor: {enabled: true}}"},
	"metrics.podMonitor.labels":       {set: "metrics: {podMonitor: {labels: {release: prom}}}", context: "metrics: {podMonitor: {enabled: true}}"},
	"startupProbe.periodSeconds":      {set: "startupProbe: {periodSeconds: 7}"},
	"startupProbe.failureThreshold":   {set: "startupProbe: {failureThreshold: 9}"},
	"hostNetwork.enabled":             {set: "hostNetwork: {enabled: true}"},
	"hostNetwork.eventsHealthPort":    {set: "hostNetwork: {eventsHealthPort: 14000}", context: "hostNetwork: {enabled: true}"},
	"hostNetwork.eventsMetricsPort":   {set: "hostNetwork: {eventsMetricsPort: 9000}", context: "hostNetwork: {enabled: true}"},
	"apiServer.host":                  {set: "apiServer: {host: 127.0.0.1}"},
	"apiServer.port":                  {set: `apiServer: {port: "6443"}`},

	"node.enabled":                       {set: "node: {enabled: false}"},
	"node.serviceAccount.annotations":    {set: "node: {serviceAccount: {annotations: {a: b}}}"},
	"node.roleArn":                       {set: `node: {roleArn: "arn:aws:iam::123456789012:role/n"}`},
	"node.resources.requests.cpu":        {set: "node: {resources: {requests: {cpu: 200m}}}"},
	"node.resources.requests.memory":     {set: "node: {resources: {requests: {memory: 256Mi}}}"},
	"node.resources.limits.memory":       {set: "node: {resources: {limits: {memory: 1Gi}}}"},
	"node.goMemLimitPercent":             {set: "node: {goMemLimitPercent: 50}"},
	"node.terminationGracePeriodSeconds": {set: "node: {terminationGracePeriodSeconds: 90}"},
	"node.priorityClassName":             {set: "node: {priorityClassName: logging-critical}"},
	"node.tolerations":                   {set: "node: {tolerations: []}"},
	"node.nodeSelector":                  {set: "node: {nodeSelector: {pool: logs}}"},
	"node.affinity":                      {set: "node: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [logs]}]}]}}}}"},
	"node.podAnnotations":                {set: "node: {podAnnotations: {a: b}}"},
	"node.hostStateDir":                  {set: "node: {hostStateDir: /var/lib/other}"},
	"node.dockerContainers":              {set: "node: {dockerContainers: true}"},
	"node.seLinuxOptions":                {set: "node: {seLinuxOptions: {type: spc_t}}"},
	"node.extraConfig":                   {set: "node: {extraConfig: {exporters: {debug: {}}}}"},
	"node.extraEnv":                      {set: "node: {extraEnv: [{name: EXTRA, value: x}]}"},
	"node.build":                         {set: "node: {build: full}"},

	"audit.auditd.enabled":       {set: "audit: {auditd: {enabled: true}}"},
	"audit.apiServer.enabled":    {set: "audit: {apiServer: {enabled: true}}"},
	"audit.apiServer.directory":  {set: "audit: {apiServer: {directory: /var/log/kube-apiserver}}", context: "audit: {apiServer: {enabled: true}}"},
	"journal.enabled":            {set: "journal: {enabled: false}"},
	"journal.units":              {set: "journal: {units: [kubelet.service]}"},
	"journal.identifiers":        {set: "journal: {identifiers: []}"},
	"journal.supplementalGroups": {set: "journal: {supplementalGroups: [190]}"},

	"events.enabled":                       {set: "events: {enabled: false}"},
	"events.replicas":                      {set: "events: {replicas: 3}"},
	"events.serviceAccount.annotations":    {set: "events: {serviceAccount: {annotations: {a: b}}}"},
	"events.roleArn":                       {set: `events: {roleArn: "arn:aws:iam::123456789012:role/e"}`},
	"events.resources.requests.cpu":        {set: "events: {resources: {requests: {cpu: 200m}}}"},
	"events.resources.requests.memory":     {set: "events: {resources: {requests: {memory: 256Mi}}}"},
	"events.resources.limits.memory":       {set: "events: {resources: {limits: {memory: 1Gi}}}"},
	"events.goMemLimitPercent":             {set: "events: {goMemLimitPercent: 50}"},
	"events.goMaxProcs":                    {set: "events: {goMaxProcs: 2}"},
	"events.goGC":                          {set: "events: {goGC: 100}"},
	"events.terminationGracePeriodSeconds": {set: "events: {terminationGracePeriodSeconds: 90}"},
	"events.priorityClassName":             {set: "events: {priorityClassName: logging-critical}"},
	"events.tolerations":                   {set: "events: {tolerations: [{operator: Exists}]}"},
	"events.nodeSelector":                  {set: "events: {nodeSelector: {pool: logs}}"},
	"events.affinity":                      {set: "events: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [logs]}]}]}}}}"},
	"events.podAnnotations":                {set: "events: {podAnnotations: {a: b}}"},
	"events.extraConfig":                   {set: "events: {extraConfig: {exporters: {debug: {}}}}"},
	"events.extraEnv":                      {set: "events: {extraEnv: [{name: EXTRA, value: x}]}"},
}

// TestEveryValueReachesOutput renders the chart once per documented value (every key of
// values.yaml and of values.schema.json) set to something other than its default, and fails
// for a key whose value changes nothing the chart renders: a key the schema accepts and no
// template reads is a setting that silently does nothing.
func TestEveryValueReachesOutput(t *testing.T) {
	documented := append(valuesLeaves(t), schemaKeys(t)...)
	for _, k := range slices.Compact(slices.Sorted(slices.Values(documented))) {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(valueProbes)), func(p string) bool { return covers(p, k) }) {
			t.Errorf("documented value %s has no probe in valueProbes: add one (and make a template read it)", k)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(valueProbes)) {
		p := valueProbes[key]
		t.Run(key, func(t *testing.T) {
			base := with(t, p.context)
			probed := with(t, p.context)
			over := map[string]any{}
			require.NoError(t, yaml.Unmarshal([]byte(p.set), &over))
			merge(probed, over)
			a, b := render(t, base), render(t, probed)
			assert.False(t, reflect.DeepEqual(a, b), "%s = %s changes nothing the chart renders", key, p.set)
		})
	}
}

// TestSchemaRefusesKeysNoTemplateReads: the keys the two workloads used to share in the schema
// but only one of them reads are refused for the other.
func TestSchemaRefusesKeysNoTemplateReads(t *testing.T) {
	for _, v := range []string{
		"node: {replicas: 2}", "node: {goMaxProcs: 1}", "node: {goGC: 200}",
		"events: {hostStateDir: /var/lib/x}", "events: {seLinuxOptions: {type: spc_t}}", "events: {build: node}",
	} {
		t.Run(v, func(t *testing.T) {
			_, err := Render(filepath.Join(root, ChartDir), ReleaseName, ReleaseNamespace, with(t, v))
			require.Error(t, err)
		})
	}
}

// covers reports whether a probe of key p sets the documented key k: the same key, or one
// inside the other (a probe of node.resources.limits.memory covers the schema's
// node.resources.limits; a probe of node.seLinuxOptions covers node.seLinuxOptions.type).
func covers(p, k string) bool {
	return p == k || strings.HasPrefix(p, k+".") || strings.HasPrefix(k, p+".")
}

// valuesLeaves returns the dotted keys of values.yaml's leaves: scalars, lists and empty maps.
func valuesLeaves(t *testing.T) []string {
	t.Helper()
	vals, err := ReadValues(filepath.Join(root, ChartDir, "values.yaml"))
	require.NoError(t, err)
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(prefix+k+".", sub)
				continue
			}
			out = append(out, prefix+k)
		}
	}
	walk("", vals)
	sort.Strings(out)
	return out
}

// schemaKeys returns the dotted keys values.schema.json declares (properties, through $ref and
// allOf), without Helm's own "global".
func schemaKeys(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, ChartDir, "values.schema.json"))
	require.NoError(t, err)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(raw, &schema))
	defs, _ := schema["definitions"].(map[string]any)
	var resolve func(s any) []map[string]any
	resolve = func(s any) []map[string]any {
		m, ok := s.(map[string]any)
		if !ok {
			return nil
		}
		out := []map[string]any{m}
		if ref, ok := m["$ref"].(string); ok {
			out = append(out, resolve(defs[strings.TrimPrefix(ref, "#/definitions/")])...)
		}
		for _, a := range asSlice(m["allOf"]) {
			out = append(out, resolve(a)...)
		}
		return out
	}
	var keys []string
	var walk func(prefix string, s any)
	walk = func(prefix string, s any) {
		props := map[string][]any{}
		for _, part := range resolve(s) {
			for k, v := range asMap(part["properties"]) {
				props[k] = append(props[k], v)
			}
		}
		for k, schemas := range props {
			if prefix == "" && k == "global" {
				continue
			}
			nested := false
			for _, sub := range schemas {
				for _, part := range resolve(sub) {
					nested = nested || len(asMap(part["properties"])) > 0
				}
			}
			if !nested {
				keys = append(keys, prefix+k)
				continue
			}
			for _, sub := range schemas {
				walk(prefix+k+".", sub)
			}
		}
	}
	walk("", schema)
	return keys
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asSlice(v any) []any        { s, _ := v.([]any); return s }
