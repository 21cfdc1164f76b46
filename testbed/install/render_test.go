// SPDX-License-Identifier: Apache-2.0

package install

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestPlainManifestsMatchChart fails when deploy/kubernetes is not the chart's rendering with
// deploy/kubernetes/chart-values.yaml: the plain manifests are never edited by hand.
func TestPlainManifestsMatchChart(t *testing.T) {
	files, err := Manifests(root)
	require.NoError(t, err)
	drift, err := Drift(root, files)
	require.NoError(t, err)
	require.Empty(t, drift, "deploy/kubernetes differs from the chart's rendering: run `make manifests` and commit the result")
	// The e2e harness and the distribution tests read these files by name.
	for _, f := range []string{"configmap.yaml", "events-configmap.yaml", "daemonset.yaml", "kustomization.yaml"} {
		_, err := os.Stat(filepath.Join(root, ManifestsDir, f))
		require.NoError(t, err)
	}
}

// TestDriftDetectsEdits proves that the drift check sees a hand edit and a stale generated file.
func TestDriftDetectsEdits(t *testing.T) {
	files, err := Manifests(root)
	require.NoError(t, err)
	edited := map[string][]byte{}
	for n, b := range files {
		edited[n] = b
	}
	edited["daemonset.yaml"] = append([]byte{}, files["daemonset.yaml"]...)
	edited["daemonset.yaml"] = []byte(strings.Replace(string(edited["daemonset.yaml"]), "maxUnavailable: 10%", "maxUnavailable: 1", 1))
	delete(edited, "service.yaml")
	drift, err := Drift(root, edited)
	require.NoError(t, err)
	assert.Equal(t, []string{"daemonset.yaml", "service.yaml"}, drift)
}

func TestChartRequiresClusterAndRegion(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals map[string]any
		want string
	}{
		{"no cluster name", map[string]any{"aws": map[string]any{"region": "eu-west-1"}}, "clusterName is required"},
		{"no region", map[string]any{"clusterName": "c"}, "aws.region is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(filepath.Join(root, ChartDir), ReleaseName, ReleaseNamespace, tc.vals)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestSchemaRejects checks values.schema.json: each value is refused with its key named.
func TestSchemaRejects(t *testing.T) {
	for _, tc := range []struct{ name, values, key string }{
		{"unknown top-level key", "clustername: x", "clustername"},
		{"group by", "logGroups: {groupBy: pod}", "groupBy"},
		{"retention", "logGroups: {retentionDays: 31}", "retentionDays"},
		{"role ARN", "node: {roleArn: my-role}", "roleArn"},
		{"memory limit", "node: {resources: {limits: {memory: lots}}}", "memory"},
		{"grace period shorter than the exporter timeout", "events: {terminationGracePeriodSeconds: 10}", "terminationGracePeriodSeconds"},
		{"region", "aws: {region: Ireland}", "region"},
		{"metrics level", "metrics: {level: verbose}", "level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(filepath.Join(root, ChartDir), ReleaseName, ReleaseNamespace, with(t, tc.values))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.key)
		})
	}
}

// TestChartValues renders the main value combinations and checks what each value changes.
func TestChartValues(t *testing.T) {
	const node, events = "otelcol-k8s-node", "otelcol-k8s-events"
	t.Run("defaults", func(t *testing.T) {
		objs := objects(t, render(t, baseValues()))
		ds := find(objs, "DaemonSet", node)
		require.NotNil(t, ds)
		env := containerEnv(t, ds)
		assert.Equal(t, map[string]string{
			"K8S_NODE_NAME": "<from>", "AWS_REGION": "eu-west-1", "CLUSTER_NAME": "test-cluster", "GOMEMLIMIT": "409MiB",
		}, env, "every variable is one the configuration reads (or the Go runtime)")
		assert.Equal(t, map[string]string{
			"POD_NAME": "<from>", "AWS_REGION": "eu-west-1", "CLUSTER_NAME": "test-cluster", "GOMEMLIMIT": "204MiB",
			"GOMAXPROCS": "1", "GOGC": "200",
		}, containerEnv(t, find(objs, "Deployment", events)))
		text, cfg := collectorConfig(t, objs, node)
		for _, ref := range []string{"${env:AWS_REGION}", "${env:CLUSTER_NAME}", "${env:K8S_NODE_NAME}"} {
			assert.Contains(t, text, ref)
		}
		assert.Equal(t, "namespace_name", dig(cfg, "exporters", "cloudwatch_groups", "group_by"))
		assert.Equal(t, 30, dig(cfg, "exporters", "cloudwatch_groups", "retention_days"))
		assert.Nil(t, dig(cfg, "exporters", "cloudwatch_groups", "namespace_uid"))
		assert.Equal(t, 8888, dig(cfg, "service", "telemetry", "metrics", "readers").([]any)[0].(map[string]any)["pull"].(map[string]any)["exporter"].(map[string]any)["prometheus"].(map[string]any)["port"])
		assert.Equal(t, []string{
			"/namespaces:get", "/pods:get", "/pods:list", "/pods:watch",
			"apps/replicasets:get", "batch/jobs:get",
		},
			rules(t, find(objs, "ClusterRole", node)), "pod_metadata: the node's Pods, and single namespaces, ReplicaSets and Jobs")
		assert.Equal(t, []string{
			"/configmaps:get@otelcol-k8s-events-checkpoint", "/configmaps:update@otelcol-k8s-events-checkpoint",
			"coordination.k8s.io/leases:get@otelcol-k8s-events", "coordination.k8s.io/leases:update@otelcol-k8s-events",
		}, rules(t, find(objs, "Role", events)), "by name only, and no create: the chart creates them")
		assert.NotNil(t, find(objs, "ConfigMap", "otelcol-k8s-events-checkpoint"))
		assert.NotNil(t, find(objs, "Lease", "otelcol-k8s-events"))
		assert.Nil(t, find(objs, "Lease", "otelcol-k8s-lifecycle"))
		assert.Nil(t, find(objs, "Namespace", ReleaseNamespace), "helm install --create-namespace makes it")
		assert.Nil(t, find(objs, "ServiceMonitor", node))
		assert.Contains(t, container(t, ds), "startupProbe")
		assert.Empty(t, find(objs, "ServiceAccount", node).GetAnnotations())
	})
	t.Run("namespace_uid routes by the resource attribute and grants nothing more", func(t *testing.T) {
		objs := objects(t, render(t, with(t, "logGroups: {groupBy: namespace_uid}")))
		for _, w := range []string{node, events} {
			_, cfg := collectorConfig(t, objs, w)
			assert.Equal(t, "namespace_uid", dig(cfg, "exporters", "cloudwatch_groups", "group_by"))
			assert.Nil(t, dig(cfg, "exporters", "cloudwatch_groups", "namespace_uid"), "the exporter runs no namespace watch")
			assert.NotContains(t, rules(t, find(objs, "ClusterRole", w)), "/namespaces:list")
		}
		_, cfg := collectorConfig(t, objs, node)
		assert.Contains(t, dig(cfg, "receivers", "cri_log", "extract", "metadata"), "k8s.namespace.uid",
			"the node agent writes the uid the exporter routes by (pod_metadata's namespace GETs)")
		_, def := collectorConfig(t, objects(t, render(t, with(t, ""))), node)
		assert.Nil(t, dig(def, "receivers", "cri_log", "extract"), "other group_by values keep cri_log's default")
	})
	t.Run("SELinux type", func(t *testing.T) {
		objs := objects(t, render(t, with(t, "node: {seLinuxOptions: {type: spc_t}}")))
		assert.Equal(t, map[string]any{"type": "spc_t"}, dig(container(t, find(objs, "DaemonSet", node)), "securityContext", "seLinuxOptions"))
		assert.Nil(t, dig(container(t, find(objs, "Deployment", events)), "securityContext", "seLinuxOptions"))
	})
	t.Run("prefix, retention, KMS and tags", func(t *testing.T) {
		objs := objects(t, render(t, with(t, `logGroups: {prefix: /eks/prod, retentionDays: 7, kmsKeyArn: "arn:aws:kms:eu-west-1:123456789012:key/k", tags: {team: logs}}`)))
		_, cfg := collectorConfig(t, objs, node)
		assert.Equal(t, "/eks/prod", dig(cfg, "exporters", "cloudwatch_groups", "group_prefix"))
		assert.Equal(t, 7, dig(cfg, "exporters", "cloudwatch_groups", "retention_days"))
		assert.Equal(t, "arn:aws:kms:eu-west-1:123456789012:key/k", dig(cfg, "exporters", "cloudwatch_groups", "kms_key_id"))
		assert.Equal(t, map[string]any{"team": "logs"}, dig(cfg, "exporters", "cloudwatch_groups", "tags"))
		_, ecfg := collectorConfig(t, objs, events)
		assert.Equal(t, "/eks/prod-events", dig(ecfg, "exporters", "cloudwatch_groups", "group_prefix"))
	})
	t.Run("IRSA role ARNs annotate the service accounts", func(t *testing.T) {
		objs := objects(t, render(t, with(t, `{node: {roleArn: "arn:aws:iam::123456789012:role/node"}, events: {roleArn: "arn:aws:iam::123456789012:role/events"}}`)))
		assert.Equal(t, "arn:aws:iam::123456789012:role/node", find(objs, "ServiceAccount", node).GetAnnotations()["eks.amazonaws.com/role-arn"])
		assert.Equal(t, "arn:aws:iam::123456789012:role/events", find(objs, "ServiceAccount", events).GetAnnotations()["eks.amazonaws.com/role-arn"])
	})
	t.Run("a configuration change rolls the pods", func(t *testing.T) {
		sum := func(objs []*unstructured.Unstructured, kind, name string) string {
			return find(objs, kind, name).Object["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)["checksum/config"].(string)
		}
		a := objects(t, render(t, baseValues()))
		b := objects(t, render(t, with(t, "logGroups: {retentionDays: 60}")))
		assert.NotEmpty(t, sum(a, "DaemonSet", node))
		assert.NotEqual(t, sum(a, "DaemonSet", node), sum(b, "DaemonSet", node))
		assert.NotEqual(t, sum(a, "Deployment", events), sum(b, "Deployment", events))
		c := objects(t, render(t, with(t, "node: {tolerations: []}")))
		assert.Equal(t, sum(a, "DaemonSet", node), sum(c, "DaemonSet", node), "only the configuration moves the hash")
	})
	t.Run("extra pipeline config is merged", func(t *testing.T) {
		objs := objects(t, render(t, with(t, `node: {extraConfig: {exporters: {debug: {}}, service: {pipelines: {logs/debug: {receivers: [cri_log], exporters: [debug]}}}}}`)))
		_, cfg := collectorConfig(t, objs, node)
		assert.NotNil(t, dig(cfg, "exporters", "cloudwatch_groups"), "the shipped exporter stays")
		assert.NotNil(t, dig(cfg, "exporters", "debug"))
		assert.NotNil(t, dig(cfg, "service", "pipelines", "logs"))
		assert.NotNil(t, dig(cfg, "service", "pipelines", "logs/debug"))
	})
	t.Run("monitors, resources, tolerations, events off", func(t *testing.T) {
		objs := objects(t, render(t, with(t, `{metrics: {serviceMonitor: {enabled: true}, podMonitor: {enabled: true}}, events: {enabled: false}, node: {resources: {limits: {memory: 1Gi}}, tolerations: [{key: dedicated, operator: Equal, value: logs, effect: NoSchedule}]}}`)))
		assert.NotNil(t, find(objs, "ServiceMonitor", node))
		assert.NotNil(t, find(objs, "PodMonitor", node))
		assert.Nil(t, find(objs, "Deployment", events))
		assert.Nil(t, find(objs, "ServiceMonitor", events))
		assert.Nil(t, find(objs, "Service", events+"-metrics"))
		ds := find(objs, "DaemonSet", node)
		assert.Equal(t, "819MiB", containerEnv(t, ds)["GOMEMLIMIT"])
		tol, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "tolerations")
		assert.Equal(t, []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "logs", "effect": "NoSchedule"}}, tol)
	})
}

// TestTracesSwitch checks traces.enabled: off (the default), neither configuration has a
// component of tracing and no Pod watch runs for it, and the RBAC for it is not granted; on,
// all of it is rendered.
func TestTracesSwitch(t *testing.T) {
	const node, events = "otelcol-k8s-node", "otelcol-k8s-events"
	tracing := map[string][][]string{
		node: {
			{"extensions", "trace_context"},
			{"extensions", "trace_context", "pod_metadata"},
			{"extensions", "pod_metadata", "pod_status"},
			{"extensions", "aws_sigv4_auth"},
			{"receivers", "kube_lifecycle"},
			{"receivers", "kube_lifecycle", "pod_metadata"},
			{"receivers", "otlp"},
			{"processors", "batch/traces"},
			{"processors", "object_ref", "trace_context"},
			{"processors", "object_ref", "own_pod"},
			{"exporters", "otlp_http/xray"},
			{"service", "pipelines", "traces"},
		},
		events: {
			{"extensions", "aws_sigv4_auth"},
			{"receivers", "kube_lifecycle"},
			{"exporters", "otlp_http/xray"},
			{"service", "pipelines", "traces"},
		},
	}
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("enabled=%v", on), func(t *testing.T) {
			objs := objects(t, render(t, with(t, fmt.Sprintf("traces: {enabled: %v}", on))))
			for name, paths := range tracing {
				text, cfg := collectorConfig(t, objs, name)
				for _, p := range paths {
					assert.Equal(t, on, dig(cfg, p...) != nil, "%s: %v", name, p)
				}
				assert.Equal(t, on, strings.Contains(text, "xray"), "%s mentions X-Ray", name)
				exts, _ := dig(cfg, "service", "extensions").([]any)
				assert.Equal(t, on, slices.Contains(exts, any("aws_sigv4_auth")), "%s service extensions %v", name, exts)
			}
			_, ncfg := collectorConfig(t, objs, node)
			assert.NotNil(t, dig(ncfg, "processors", "object_ref"), "object_ref stays, with or without trace_context")
			assert.NotNil(t, dig(ncfg, "extensions", "pod_metadata"), "pod_metadata stays: cri_log's")
			if on {
				assert.Equal(t, "127.0.0.1:4317", dig(ncfg, "receivers", "otlp", "protocols", "grpc", "endpoint"), "OTLP on localhost by default")
				assert.Equal(t, "127.0.0.1:4318", dig(ncfg, "receivers", "otlp", "protocols", "http", "endpoint"))
				assert.Equal(t, []any{"kube_lifecycle", "otlp"}, dig(ncfg, "service", "pipelines", "traces", "receivers"))
			}
			assert.Equal(t, on, slices.Contains(rules(t, find(objs, "ClusterRole", node)), "apps/deployments:get"))
			// rollouts follow the Events: no Deployment or ReplicaSet watch, no Lease of their own
			assert.Equal(t, on, slices.Contains(rules(t, find(objs, "ClusterRole", events)), "apps/deployments:get"))
			assert.Equal(t, on, slices.Contains(rules(t, find(objs, "ClusterRole", events)), "apps/replicasets:get"))
			for _, r := range []string{"apps/deployments:list", "apps/deployments:watch", "apps/replicasets:list", "apps/replicasets:watch"} {
				assert.NotContains(t, rules(t, find(objs, "ClusterRole", events)), r)
			}
			assert.NotContains(t, rules(t, find(objs, "Role", events)), "coordination.k8s.io/leases:update@otelcol-k8s-lifecycle")
			assert.Nil(t, find(objs, "Lease", "otelcol-k8s-lifecycle"))
			if on {
				_, ecfg := collectorConfig(t, objs, events)
				assert.Equal(t, "trace_context", dig(ecfg, "receivers", "kube_lifecycle", "trace_context"))
				assert.Nil(t, dig(ecfg, "receivers", "kube_lifecycle", "leader_election"))
			}
		})
	}
}

// TestNodePlacement checks where the DaemonSet runs: Linux nodes only (a user's selector is
// added to it), not EKS Fargate (unless the affinity is replaced), every taint tolerated.
func TestNodePlacement(t *testing.T) {
	const node = "otelcol-k8s-node"
	ds := find(objects(t, render(t, baseValues())), "DaemonSet", node)
	sel, _, _ := unstructured.NestedStringMap(ds.Object, "spec", "template", "spec", "nodeSelector")
	assert.Equal(t, map[string]string{"kubernetes.io/os": "linux"}, sel)
	terms, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	assert.Equal(t, []any{map[string]any{"matchExpressions": []any{map[string]any{
		"key": "eks.amazonaws.com/compute-type", "operator": "NotIn", "values": []any{"fargate"},
	}}}}, terms)
	tol, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "tolerations")
	assert.Equal(t, []any{map[string]any{"operator": "Exists"}}, tol)

	ds = find(objects(t, render(t, with(t, `node: {nodeSelector: {pool: logs, kubernetes.io/os: windows}, affinity: {podAffinity: {}}}`))), "DaemonSet", node)
	sel, _, _ = unstructured.NestedStringMap(ds.Object, "spec", "template", "spec", "nodeSelector")
	assert.Equal(t, map[string]string{"kubernetes.io/os": "linux", "pool": "logs"}, sel, "always Linux")
	aff, _, _ := unstructured.NestedMap(ds.Object, "spec", "template", "spec", "affinity")
	assert.Equal(t, map[string]any{"podAffinity": map[string]any{}}, aff, "a given affinity replaces the default")
}

// TestDockerContainersMount checks that /var/lib/docker/containers is mounted only when asked,
// and then with a hostPath type that never creates it.
func TestDockerContainersMount(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("dockerContainers=%v", on), func(t *testing.T) {
			ds := find(objects(t, render(t, with(t, fmt.Sprintf("node: {dockerContainers: %v}", on)))), "DaemonSet", "otelcol-k8s-node")
			vols, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "volumes")
			var docker map[string]any
			for _, v := range vols {
				hp, _ := v.(map[string]any)["hostPath"].(map[string]any)
				if hp["path"] == "/var/lib/docker/containers" {
					docker = hp
				}
				if hp != nil && hp["path"] != "/var/lib/otelcol-k8s" {
					assert.Equal(t, "Directory", hp["type"], "%v: a host path the agent reads is never created", hp["path"])
				}
			}
			assert.Equal(t, on, docker != nil)
			assert.Equal(t, on, strings.Contains(fmt.Sprint(container(t, ds)["volumeMounts"]), "/var/lib/docker/containers"))
		})
	}
}

// TestTwoReleasesInOneNamespace renders two releases into one namespace: no namespaced object
// name and no Lease or checkpoint a collector names is shared.
func TestTwoReleasesInOneNamespace(t *testing.T) {
	names := func(release string) (map[string]bool, []string) {
		files, err := Render(filepath.Join(root, ChartDir), release, "shared", with(t, "traces: {enabled: true}"))
		require.NoError(t, err)
		objs := objects(t, files)
		out := map[string]bool{}
		for _, o := range objs {
			out[o.GetKind()+"/"+o.GetName()] = true
		}
		_, cfg := collectorConfig(t, objs, release+"-otelcol-k8s-events")
		var leases []string
		// kube_events' only: kube_lifecycle's rollouts follow its leadership
		assert.Nil(t, dig(cfg, "receivers", "kube_lifecycle", "leader_election"))
		for _, r := range []string{"kube_events"} {
			l, _ := dig(cfg, "receivers", r, "leader_election", "lease_name").(string)
			require.NotEmpty(t, l, r)
			require.True(t, out["Lease/"+l], "the chart creates the Lease %s", l)
			leases = append(leases, l)
		}
		require.True(t, out["ConfigMap/"+leases[0]+"-checkpoint"], "the chart creates kube_events' checkpoint ConfigMap")
		return out, leases
	}
	a, la := names("blue")
	b, lb := names("green")
	for n := range a {
		assert.False(t, b[n], "%s is rendered by both releases", n)
	}
	for _, l := range la {
		assert.NotContains(t, lb, l)
	}
}

// TestGroupSettingsReachExistingGroups checks that the exporters bring existing groups in line
// when a group setting is set, and leave them alone when none is.
func TestGroupSettingsReachExistingGroups(t *testing.T) {
	for _, tc := range []struct {
		values string
		want   bool
	}{
		{"", true}, // retention 30 days by default
		{"logGroups: {retentionDays: 0}", false},
		{"logGroups: {retentionDays: 0, tags: {team: logs}}", true},
		{`logGroups: {retentionDays: 0, kmsKeyArn: "arn:aws:kms:eu-west-1:123456789012:key/k"}`, true},
	} {
		t.Run(tc.values, func(t *testing.T) {
			objs := objects(t, render(t, with(t, tc.values)))
			for _, name := range []string{"otelcol-k8s-node", "otelcol-k8s-events"} {
				_, cfg := collectorConfig(t, objs, name)
				got, _ := dig(cfg, "exporters", "cloudwatch_groups", "apply_settings_to_existing_groups").(bool)
				assert.Equal(t, tc.want, got, name)
			}
		})
	}
}

func TestGoMemLimit(t *testing.T) {
	for _, tc := range []struct {
		limit   string
		percent int
		want    string
	}{
		{"512Mi", 80, "409MiB"},
		{"1Gi", 80, "819MiB"},
		{"1G", 80, "762MiB"},
		{"600M", 90, "514MiB"},
		{"2000000000", 80, "1525MiB"},
		{"256Mi", 100, "256MiB"},
	} {
		t.Run(tc.limit, func(t *testing.T) {
			objs := objects(t, render(t, with(t, "node: {goMemLimitPercent: "+strconv.Itoa(tc.percent)+", resources: {limits: {memory: \""+tc.limit+"\"}}}")))
			assert.Equal(t, tc.want, containerEnv(t, find(objs, "DaemonSet", "otelcol-k8s-node"))["GOMEMLIMIT"])
		})
	}
}

// TestEventsRuntimeEnv checks the events Deployment's Go runtime values: set when given, left
// to Go at 0.
func TestEventsRuntimeEnv(t *testing.T) {
	for _, tc := range []struct {
		values string
		name   string // the variable
		want   string // "": not set
	}{
		{"events: {goMaxProcs: 1}", "GOMAXPROCS", "1"},
		{"events: {goMaxProcs: 2}", "GOMAXPROCS", "2"},
		{"events: {goMaxProcs: 0}", "GOMAXPROCS", ""},
		{"events: {goGC: 200}", "GOGC", "200"},
		{"events: {goGC: 0}", "GOGC", ""},
	} {
		t.Run(tc.values, func(t *testing.T) {
			objs := objects(t, render(t, with(t, tc.values)))
			env := containerEnv(t, find(objs, "Deployment", "otelcol-k8s-events"))
			got, ok := env[tc.name]
			assert.Equal(t, tc.want != "", ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func container(t *testing.T, o *unstructured.Unstructured) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	require.NotEmpty(t, cs)
	return cs[0].(map[string]any)
}

func dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

// TestHostNetwork: in the node's network both workloads listen on 127.0.0.1 only (health and
// metrics), the probes ask 127.0.0.1, the two workloads use different ports, and apiServer
// reaches both workloads' environment; off, nothing of it is rendered.
func TestHostNetwork(t *testing.T) {
	workloads := []struct{ kind, name, cm string }{
		{"DaemonSet", "otelcol-k8s-node", "otelcol-k8s-node"},
		{"Deployment", "otelcol-k8s-events", "otelcol-k8s-events"},
	}
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("hostNetwork=%v", on), func(t *testing.T) {
			objs := objects(t, render(t, with(t, fmt.Sprintf(`{hostNetwork: {enabled: %v}, apiServer: {host: 127.0.0.1, port: 6443}}`, on))))
			ports := map[string]bool{}
			for _, w := range workloads {
				o := find(objs, w.kind, w.name)
				require.NotNil(t, o, w.name)
				spec, _, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
				assert.Equal(t, on, spec["hostNetwork"] == true, w.name)
				if on {
					assert.Equal(t, "ClusterFirstWithHostNet", spec["dnsPolicy"], w.name)
				}
				if w.kind == "Deployment" {
					// An update must free the ports before the successor starts.
					surge, found, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "strategy", "rollingUpdate", "maxSurge")
					assert.Equal(t, on, found && fmt.Sprint(surge) == "0", "%s maxSurge %v", w.name, surge)
				}
				env := containerEnv(t, o)
				assert.Equal(t, "127.0.0.1", env["KUBERNETES_SERVICE_HOST"], w.name)
				assert.Equal(t, "6443", env["KUBERNETES_SERVICE_PORT"], w.name)
				c := container(t, o)
				for _, probe := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
					host, _, _ := unstructured.NestedString(c, probe, "httpGet", "host")
					if on {
						assert.Equal(t, "127.0.0.1", host, "%s %s", w.name, probe)
					} else {
						assert.Empty(t, host, "%s %s: the Pod's own address", w.name, probe)
					}
				}
				cps, _, _ := unstructured.NestedSlice(c, "ports")
				for _, p := range cps {
					ports[fmt.Sprint(p.(map[string]any)["containerPort"])] = true
				}
				text, cfg := collectorConfig(t, objs, w.cm)
				health, _, _ := unstructured.NestedString(cfg, "extensions", "health_check", "endpoint")
				if on {
					assert.NotContains(t, text, "0.0.0.0", "%s: nothing listens beyond loopback", w.cm)
					assert.True(t, strings.HasPrefix(health, "127.0.0.1:"), "%s health_check %s", w.cm, health)
				} else {
					assert.True(t, strings.HasPrefix(health, "0.0.0.0:"), "%s health_check %s", w.cm, health)
				}
				assert.Contains(t, fmt.Sprint(cps), strings.TrimPrefix(strings.TrimPrefix(health, "127.0.0.1:"), "0.0.0.0:"), "%s: the health port is the container's", w.name)
			}
			if on {
				assert.Len(t, ports, 4, "in the node's network each workload has its own ports: %v", ports)
			}
		})
	}
}

// TestJournalSwitch checks journal.enabled: on (the default), the journal receiver is in the
// node agent's logs pipeline with the listed units and identifiers, checkpointed in
// file_storage, the journal's host paths are mounted read-only and never created, and the pod's
// security context gains nothing but the groups asked for; off, none of it is rendered.
func TestJournalSwitch(t *testing.T) {
	const node = "otelcol-k8s-node"
	for _, tc := range []struct {
		name, values string
		on           bool
		groups       []any // nil: none
	}{
		{"default", "", true, nil},
		{"off", "journal: {enabled: false, supplementalGroups: [190]}", false, nil},
		{"units and groups", "journal: {units: [kubelet.service], identifiers: [], supplementalGroups: [190, 4]}", true, []any{float64(190), float64(4)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := objects(t, render(t, with(t, tc.values)))
			_, cfg := collectorConfig(t, objs, node)
			recv, _ := dig(cfg, "service", "pipelines", "logs", "receivers").([]any)
			assert.Equal(t, tc.on, slices.Contains(recv, any("journal")), "logs receivers %v", recv)
			jr, _ := dig(cfg, "receivers", "journal").(map[string]any)
			assert.Equal(t, tc.on, jr != nil)
			if tc.on {
				assert.Equal(t, "file_storage", jr["storage"])
				assert.Equal(t, []any{"/var/log/journal", "/run/log/journal"}, jr["directories"])
				if tc.values == "" {
					assert.Equal(t, []any{"kubelet.service", "containerd.service", "docker.service", "sandbox-image.service"}, jr["units"])
					assert.Equal(t, []any{"kernel"}, jr["identifiers"])
				} else {
					assert.Equal(t, []any{"kubelet.service"}, jr["units"])
					assert.Equal(t, []any{}, jr["identifiers"])
				}
			}

			ds := find(objs, "DaemonSet", node)
			mounts := map[string]map[string]any{}
			ms, _ := container(t, ds)["volumeMounts"].([]any)
			for _, m := range ms {
				mm := m.(map[string]any)
				mounts[mm["mountPath"].(string)] = mm
			}
			vols, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "volumes")
			hostPaths := map[string]map[string]any{}
			for _, v := range vols {
				if hp, ok := v.(map[string]any)["hostPath"].(map[string]any); ok {
					hostPaths[hp["path"].(string)] = hp
				}
			}
			// /var/log/journal through /var/log: a node without a persistent journal has no
			// /var/log/journal, and a mount of it would keep the agent from starting.
			assert.NotContains(t, hostPaths, "/var/log/journal", "a mount the node may not have")
			for _, p := range []string{"/var/log", "/run/log"} {
				if !tc.on {
					assert.NotContains(t, mounts, p)
					assert.NotContains(t, hostPaths, p)
					continue
				}
				if assert.Contains(t, mounts, p) {
					assert.Equal(t, true, mounts[p]["readOnly"], p)
				}
				if assert.Contains(t, hostPaths, p) {
					assert.Equal(t, "Directory", hostPaths[p]["type"], "%s is never created", p)
				}
			}
			sc, _, _ := unstructured.NestedMap(ds.Object, "spec", "template", "spec", "securityContext")
			assert.Equal(t, "0", fmt.Sprint(sc["runAsUser"]), "uid 0: the journal files' owner")
			groups, _ := sc["supplementalGroups"].([]any)
			assert.Equal(t, tc.groups, groups)
			csc, _ := container(t, ds)["securityContext"].(map[string]any)
			assert.Equal(t, false, csc["allowPrivilegeEscalation"])
			assert.Equal(t, true, csc["readOnlyRootFilesystem"])
			assert.Equal(t, map[string]any{"drop": []any{"ALL"}}, csc["capabilities"], "no capability added for the journal")
		})
	}
}

// TestAuditSwitch checks the audit inputs: off by default (no receiver, pipeline or mount);
// each on renders its audit_log receiver with its format and checkpoint, the logs/audit
// pipeline straight to the exporter, and its folder mounted read-only.
func TestAuditSwitch(t *testing.T) {
	const node = "otelcol-k8s-node"
	for _, tc := range []struct {
		name, values string
		receivers    []any
		mounts       []string
	}{
		{"default", "", nil, nil},
		{"auditd", "audit: {auditd: {enabled: true}}", []any{"audit_log/auditd"}, []string{"/var/log/audit"}},
		{"apiserver", "audit: {apiServer: {enabled: true, directory: /var/log/kube-apiserver}}", []any{"audit_log/apiserver"}, []string{"/var/log/kube-apiserver"}},
		{"both", "audit: {auditd: {enabled: true}, apiServer: {enabled: true}}", []any{"audit_log/auditd", "audit_log/apiserver"}, []string{"/var/log/audit", "/var/log/kubernetes/audit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := objects(t, render(t, with(t, tc.values)))
			_, cfg := collectorConfig(t, objs, node)
			got, _ := dig(cfg, "service", "pipelines", "logs/audit", "receivers").([]any)
			assert.Equal(t, tc.receivers, got)
			if tc.receivers != nil {
				assert.Equal(t, []any{"memory_limiter"}, dig(cfg, "service", "pipelines", "logs/audit", "processors"))
				assert.Equal(t, []any{"cloudwatch_groups"}, dig(cfg, "service", "pipelines", "logs/audit", "exporters"))
			}
			for _, id := range []string{"audit_log/auditd", "audit_log/apiserver"} {
				r, _ := dig(cfg, "receivers", id).(map[string]any)
				assert.Equal(t, slices.Contains(tc.receivers, any(id)), r != nil, id)
				if r == nil {
					continue
				}
				assert.Equal(t, "file_storage", r["storage"])
				if id == "audit_log/auditd" {
					assert.Equal(t, "auditd", r["format"])
					assert.Equal(t, []any{"/var/log/audit/audit.log*"}, r["include"])
				} else {
					assert.Equal(t, "kubernetes", r["format"])
					assert.Equal(t, []any{tc.mounts[len(tc.mounts)-1] + "/*.log"}, r["include"])
				}
			}
			recv, _ := dig(cfg, "service", "pipelines", "logs", "receivers").([]any)
			assert.Equal(t, []any{"cri_log", "journal"}, recv, "audit records skip the container logs' processors")
			ds := find(objs, "DaemonSet", node)
			ms, _ := container(t, ds)["volumeMounts"].([]any)
			vols, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "volumes")
			for _, p := range []string{"/var/log/audit", "/var/log/kubernetes/audit", "/var/log/kube-apiserver"} {
				want := slices.Contains(tc.mounts, p)
				mounted := false
				for _, m := range ms {
					mm := m.(map[string]any)
					if mm["mountPath"] == p {
						mounted = true
						assert.Equal(t, true, mm["readOnly"], p)
					}
				}
				assert.Equal(t, want, mounted, p)
				hostPath := false
				for _, v := range vols {
					if hp, ok := v.(map[string]any)["hostPath"].(map[string]any); ok && hp["path"] == p {
						hostPath = true
						assert.Equal(t, "DirectoryOrCreate", hp["type"], p)
					}
				}
				assert.Equal(t, want, hostPath, p)
			}
		})
	}
}
