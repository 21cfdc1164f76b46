// SPDX-License-Identifier: Apache-2.0

package install

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
)

// chartCombinations are the main value combinations every test against the API server renders,
// each into its own namespace (and, for the cluster-scoped objects, its own release name).
var chartCombinations = []struct{ name, values string }{
	{"defaults", ""},
	{"namespace-uid-selinux", "{logGroups: {groupBy: namespace_uid}, node: {seLinuxOptions: {type: spc_t}}, journal: {supplementalGroups: [190]}}"},
	{"irsa-kms-tags-monitors", `{node: {roleArn: "arn:aws:iam::123456789012:role/n"}, events: {roleArn: "arn:aws:iam::123456789012:role/e"},
		logGroups: {kmsKeyArn: "arn:aws:kms:eu-west-1:123456789012:key/k", tags: {team: logs}, groupBy: log_type},
		metrics: {serviceMonitor: {enabled: true}, podMonitor: {enabled: true}}}`},
	{"node-only-extra-config", `{events: {enabled: false}, journal: {enabled: false}, node: {build: full, extraConfig: {exporters: {debug: {}}, service: {pipelines: {logs/debug: {receivers: [cri_log], exporters: [debug]}}}}}}`},
	{"traces-docker-audit", `{traces: {enabled: true}, node: {dockerContainers: true}, audit: {auditd: {enabled: true}, apiServer: {enabled: true}}}`},
}

// TestAgainstAPIServer applies every rendered manifest to a real kube-apiserver: the plain
// manifests of deploy/kubernetes and the chart with each combination of chartCombinations,
// first with a server-side dry run, and then checks the RBAC of each ServiceAccount by
// SubjectAccessReview.
func TestAgainstAPIServer(t *testing.T) {
	cluster := kubecluster.Start(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
	ctx := t.Context()
	installMonitorCRDs(t, dyn)
	mapper.Reset()

	apply := func(t *testing.T, objs []*unstructured.Unstructured, dryRun bool) {
		t.Helper()
		for _, o := range objs {
			m, err := mapper.RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version)
			require.NoError(t, err, "%s %s", o.GetKind(), o.GetName())
			var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
			if m.Scope.Name() == "namespace" {
				ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
			}
			opts := metav1.ApplyOptions{FieldManager: "otelcol-k8s-test", Force: true}
			if dryRun {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			// Server-side apply refuses fields the object's schema does not declare.
			_, err = ri.Apply(ctx, o.GetName(), o, opts)
			require.NoError(t, err, "%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
		}
	}
	ensureNamespace := func(t *testing.T, ns string) {
		t.Helper()
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
	}

	t.Run("plain manifests", func(t *testing.T) {
		files, err := Sets[0].Manifests(root)
		require.NoError(t, err)
		rendered := map[string]string{}
		for n, b := range files {
			if n != "kustomization.yaml" {
				rendered[n] = string(b)
			}
		}
		objs := objects(t, rendered)
		kinds := map[string]bool{}
		for _, o := range objs {
			kinds[o.GetKind()] = true
		}
		for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap", "Lease", "DaemonSet", "Deployment", "Service"} {
			require.True(t, kinds[k], "the plain manifests have a %s", k)
		}
		// The namespace first (dry-run objects cannot land in a namespace that does not exist).
		apply(t, []*unstructured.Unstructured{find(objs, "Namespace", ReleaseNamespace)}, true)
		ensureNamespace(t, ReleaseNamespace)
		apply(t, objs, true)
		// For real, for the RBAC checks below.
		apply(t, objs, false)
		checkRBAC(t, cs, ReleaseNamespace, "otelcol-k8s", false)
	})
	t.Run("events state needs no create", func(t *testing.T) {
		// As the events ServiceAccount (impersonated): the Lease elector takes the Lease the
		// chart created and leads, and kube_events' checkpoint calls (get, then update with its
		// data) succeed on the chart's empty ConfigMap, with no create allowed.
		sa := rest.CopyConfig(cfg)
		sa.Impersonate = rest.ImpersonationConfig{
			UserName: "system:serviceaccount:" + ReleaseNamespace + ":otelcol-k8s-events",
			Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ReleaseNamespace, "system:authenticated"},
		}
		saCS, err := kubernetes.NewForConfig(sa)
		require.NoError(t, err)
		saClients, err := kubeclient.NewClients(sa)
		require.NoError(t, err)
		leading := make(chan struct{})
		var once sync.Once
		elector, err := kubeclient.NewElector(saClients.Coordination, kubeclient.Lease{
			Name: "otelcol-k8s-events", Namespace: ReleaseNamespace, Identity: "events-0",
			LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
		}, func(ctx context.Context) {
			once.Do(func() { close(leading) })
			<-ctx.Done()
		})
		require.NoError(t, err)
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); elector.Run(runCtx) }()
		select {
		case <-leading:
		case <-time.After(30 * time.Second):
			t.Fatal("the events ServiceAccount did not take the chart's Lease")
		}
		stop()
		<-done
		lease, err := cs.CoordinationV1().Leases(ReleaseNamespace).Get(ctx, "otelcol-k8s-events", metav1.GetOptions{})
		require.NoError(t, err)
		assert.NotZero(t, lease.Spec.LeaseTransitions, "the Lease was taken (and released)")

		cms := saCS.CoreV1().ConfigMaps(ReleaseNamespace)
		cm, err := cms.Get(ctx, "otelcol-k8s-events-checkpoint", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Empty(t, cm.Data, "the chart renders no data: an upgrade leaves the receiver's")
		cm.Data = map[string]string{"checkpoint": `{"resource_versions":{"":"1"}}`}
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		require.NoError(t, err)
		_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "otelcol-k8s-events-checkpoint-2"}}, metav1.CreateOptions{})
		require.True(t, apierrors.IsForbidden(err), "create is not granted: %v", err)
		// A re-apply of the chart (helm upgrade) leaves the checkpoint the receiver wrote.
		files, err := Sets[0].Manifests(root)
		require.NoError(t, err)
		state := objects(t, map[string]string{"events-state.yaml": string(files["events-state.yaml"])})
		apply(t, state, false)
		cm, err = cs.CoreV1().ConfigMaps(ReleaseNamespace).Get(ctx, "otelcol-k8s-events-checkpoint", metav1.GetOptions{})
		require.NoError(t, err)
		assert.JSONEq(t, `{"resource_versions":{"":"1"}}`, cm.Data["checkpoint"])
	})
	t.Run("plain manifests with traces", func(t *testing.T) {
		// Applied over the default set (same names): what is added, and the rules replaced.
		files, err := Sets[1].Manifests(root)
		require.NoError(t, err)
		rendered := map[string]string{}
		for n, b := range files {
			if n != "kustomization.yaml" {
				rendered[n] = string(b)
			}
		}
		objs := objects(t, rendered)
		apply(t, objs, true)
		apply(t, objs, false)
		checkRBAC(t, cs, ReleaseNamespace, "otelcol-k8s", true)
	})

	for i, c := range chartCombinations {
		t.Run("chart "+c.name, func(t *testing.T) {
			ns := fmt.Sprintf("chart-%d", i)
			release := "rel" + strconv.Itoa(i)
			files, err := Render(filepath.Join(root, ChartDir), release, ns, with(t, c.values))
			require.NoError(t, err)
			objs := objects(t, files)
			ensureNamespace(t, ns)
			apply(t, objs, true)
			apply(t, objs, false)
			if find(objs, "DaemonSet", release+"-otelcol-k8s-node") != nil && find(objs, "Deployment", release+"-otelcol-k8s-events") != nil {
				checkRBAC(t, cs, ns, release+"-otelcol-k8s", strings.Contains(c.values, "traces"))
			}
		})
	}
}

// access is one request a ServiceAccount makes or must not be able to make; name, when set, is
// the object's name.
type access struct {
	group, resource, verb, namespace, name string
}

func (a access) String() string {
	return fmt.Sprintf("%s %s.%s %q in %q", a.verb, a.resource, a.group, a.name, a.namespace)
}

// checkRBAC asks the API server, for each ServiceAccount of the release prefix in ns, whether
// it may make exactly the requests its components make (allowed) and none of a list of others
// (denied), and checks that the roles grant nothing beyond the allowed list. traces says
// whether the release has traces.enabled.
func checkRBAC(t *testing.T, cs kubernetes.Interface, ns, prefix string, traces bool) {
	t.Helper()
	// What the components do. Node agent: pod_metadata lists and watches pods (filtered by
	// node) and gets single namespaces (their opt-out label), ReplicaSets (a pod's Deployment)
	// and Jobs (a pod's CronJob) on a cache miss.
	nodeAllowed := []access{
		{"", "pods", "get", "", ""},
		{"", "pods", "list", "", ""},
		{"", "pods", "watch", "", ""},
		{"", "namespaces", "get", "", ""},
		{"apps", "replicasets", "get", "", ""},
		{"batch", "jobs", "get", "", ""},
	}
	// With traces, trace_context fetches the owners of the node's Pods (metadata GET, on
	// demand); kube_lifecycle watches the node's Pods (above).
	ownerGets := []access{
		{"apps", "deployments", "get", "", ""},
		{"apps", "statefulsets", "get", "", ""},
		{"apps", "daemonsets", "get", "", ""},
		{"batch", "cronjobs", "get", "", ""},
	}
	// Events collector: kube_events lists and watches Events (both API groups), holds its Lease
	// and keeps its checkpoint ConfigMap in its own namespace, both created by the chart and
	// reachable by name only. With traces, kube_lifecycle (rollouts) follows the controllers'
	// Events and GETs what they name (the lookups below): no list or watch of Deployments or
	// ReplicaSets and no Lease of its own, with traces or without.
	eventsAllowed := []access{
		{"events.k8s.io", "events", "get", "", ""},
		{"events.k8s.io", "events", "list", "", ""},
		{"events.k8s.io", "events", "watch", "", ""},
		{"", "events", "get", "", ""},
		{"", "events", "list", "", ""},
		{"", "events", "watch", "", ""},
		{"coordination.k8s.io", "leases", "get", ns, prefix + "-events"},
		{"coordination.k8s.io", "leases", "update", ns, prefix + "-events"},
		{"", "configmaps", "get", ns, prefix + "-events-checkpoint"},
		{"", "configmaps", "update", ns, prefix + "-events-checkpoint"},
	}
	noRolloutWatch := []access{
		{"apps", "deployments", "list", "", ""},
		{"apps", "deployments", "watch", "", ""},
		{"apps", "replicasets", "list", "", ""},
		{"apps", "replicasets", "watch", "", ""},
		{"coordination.k8s.io", "leases", "get", ns, prefix + "-lifecycle"},
		{"coordination.k8s.io", "leases", "update", ns, prefix + "-lifecycle"},
	}
	// With traces, the events collector's trace_context (lookup mode) gets the objects Events
	// are about and their owners (metadata GET, once per uid per owner_ttl), and kube_lifecycle
	// the Deployments and ReplicaSets the controllers' Events name.
	lookups := append([]access{
		{"", "pods", "get", "", ""},
		{"apps", "replicasets", "get", "", ""},
		{"batch", "jobs", "get", "", ""},
	}, ownerGets...)
	if traces {
		nodeAllowed = append(nodeAllowed, ownerGets...)
		eventsAllowed = append(eventsAllowed, lookups...)
	}
	// What neither may do: secrets, writes, other Leases and ConfigMaps (other names, other
	// namespaces), creating any, nodes, logs and exec.
	denied := []access{
		{"", "secrets", "get", ns, ""},
		{"", "secrets", "list", "", ""},
		{"", "pods", "create", "default", ""},
		{"", "pods", "delete", "default", ""},
		{"", "pods/exec", "create", "default", ""},
		{"", "pods/log", "get", "default", ""},
		{"", "nodes", "get", "", ""},
		{"", "nodes", "list", "", ""},
		{"apps", "deployments", "update", "default", ""},
		{"apps", "replicasets", "update", "default", ""},
		{"", "namespaces", "delete", "", ""},
		{"", "configmaps", "get", "kube-system", ""},
		{"", "configmaps", "get", ns, prefix + "-node"},
		{"", "configmaps", "update", ns, prefix + "-events"},
		{"", "configmaps", "update", ns, "another-release-otelcol-k8s-events-checkpoint"},
		{"", "configmaps", "create", ns, ""},
		{"", "configmaps", "list", ns, ""},
		{"coordination.k8s.io", "leases", "get", "kube-system", ""},
		{"coordination.k8s.io", "leases", "update", ns, "another-release-otelcol-k8s-events"},
		{"coordination.k8s.io", "leases", "create", ns, ""},
		{"coordination.k8s.io", "leases", "delete", ns, prefix + "-events"},
		{"", "events", "create", "default", ""},
		{"", "serviceaccounts/token", "create", ns, ""},
		{"rbac.authorization.k8s.io", "clusterroles", "bind", "", ""},
	}
	// No component lists or watches namespaces, whatever logGroups.groupBy says (pod_metadata
	// gets single ones).
	denied = append(denied, access{"", "namespaces", "list", "", ""}, access{"", "namespaces", "watch", "", ""},
		access{"apps", "replicasets", "list", "", ""}, access{"apps", "replicasets", "watch", "", ""})
	if !traces {
		denied = append(denied, ownerGets...)
	}
	denied = append(denied, noRolloutWatch...)
	for _, sa := range []struct {
		name    string
		allowed []access
	}{
		{prefix + "-node", nodeAllowed},
		{prefix + "-events", eventsAllowed},
	} {
		user := "system:serviceaccount:" + ns + ":" + sa.name
		groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
		ask := func(a access) bool {
			res := strings.SplitN(a.resource, "/", 2)
			attrs := &authorizationv1.ResourceAttributes{Namespace: a.namespace, Verb: a.verb, Group: a.group, Resource: res[0], Name: a.name}
			if len(res) == 2 {
				attrs.Subresource = res[1]
			}
			r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: attrs},
			}, metav1.CreateOptions{})
			require.NoError(t, err)
			return r.Status.Allowed
		}
		for _, a := range sa.allowed {
			assert.True(t, ask(a), "%s may %s", sa.name, a)
		}
		for _, a := range denied {
			if slices.Contains(sa.allowed, a) {
				continue
			}
			assert.False(t, ask(a), "%s must not %s", sa.name, a)
		}
		// Nothing beyond the allowed list: every rule the roles grant is one of its requests.
		granted := grantedRules(t, cs, ns, sa.name)
		var want []string
		for _, a := range sa.allowed {
			want = append(want, ruleString(a.group, a.resource, a.verb, a.name))
		}
		slices.Sort(want)
		want = slices.Compact(want)
		assert.Equal(t, want, granted, "%s: the roles grant exactly what the components do", sa.name)
	}
}

// ruleString is one granted permission: "group/resource:verb", with "@name" when the rule names
// its objects.
func ruleString(group, resource, verb, name string) string {
	s := group + "/" + resource + ":" + verb
	if name != "" {
		s += "@" + name
	}
	return s
}

// grantedRules reads from the API server the ClusterRoles and Roles bound to the
// ServiceAccount and returns their rules as "group/resource:verb".
func grantedRules(t *testing.T, cs kubernetes.Interface, ns, sa string) []string {
	t.Helper()
	ctx := t.Context()
	var out []string
	add := func(rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						for _, n := range names {
							out = append(out, ruleString(g, res, v, n))
						}
					}
				}
			}
		}
	}
	crbs, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, b := range crbs.Items {
		for _, s := range b.Subjects {
			if s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == ns {
				cr, err := cs.RbacV1().ClusterRoles().Get(ctx, b.RoleRef.Name, metav1.GetOptions{})
				require.NoError(t, err)
				add(cr.Rules)
			}
		}
	}
	rbs, err := cs.RbacV1().RoleBindings(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, b := range rbs.Items {
		for _, s := range b.Subjects {
			if s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == ns {
				r, err := cs.RbacV1().Roles(ns).Get(ctx, b.RoleRef.Name, metav1.GetOptions{})
				require.NoError(t, err)
				add(r.Rules)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installMonitorCRDs installs minimal ServiceMonitor and PodMonitor CRDs (any spec accepted) so
// the chart's prometheus-operator objects can be applied; it waits until both are served.
func installMonitorCRDs(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	crds := dyn.Resource(crdResource)
	for _, kind := range []string{"ServiceMonitor", "PodMonitor"} {
		plural := strings.ToLower(kind) + "s"
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": plural + ".monitoring.coreos.com"},
			"spec": map[string]any{
				"group": "monitoring.coreos.com",
				"names": map[string]any{"kind": kind, "plural": plural, "listKind": kind + "List", "singular": strings.ToLower(kind)},
				"scope": "Namespaced",
				"versions": []any{map[string]any{
					"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{
						"type": "object", "x-kubernetes-preserve-unknown-fields": true,
					}},
				}},
			},
		}}
		_, err := crds.Create(t.Context(), crd, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		for _, n := range []string{"servicemonitors.monitoring.coreos.com", "podmonitors.monitoring.coreos.com"} {
			o, err := crds.Get(t.Context(), n, metav1.GetOptions{})
			if err != nil {
				return false
			}
			conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
			ok := false
			for _, c := range conds {
				m := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					ok = true
				}
			}
			if !ok {
				return false
			}
		}
		return true
	}, time.Minute, 200*time.Millisecond)
}
