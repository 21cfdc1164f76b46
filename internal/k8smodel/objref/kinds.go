// SPDX-License-Identifier: Apache-2.0

package objref

// NameRule is the rule the API server applies to the names of a kind's objects.
type NameRule uint8

// Name rules.
const (
	// PathSegment: any name usable as a URL path segment (RBAC kinds, custom resources); the
	// project also refuses spaces and control characters, which no real name holds.
	PathSegment NameRule = iota
	// Subdomain: a DNS-1123 subdomain (most kinds: Pods, Nodes, Deployments, ConfigMaps, ...).
	Subdomain
	// Label: a DNS-1123 label (Namespaces).
	Label
	// Label1035: a DNS-1035 label, starting with a letter (Services).
	Label1035
)

// Kind is one row of the kind table.
type Kind struct {
	Kind       string
	Group      string // "" for the core group
	Version    string
	Resource   string // plural resource name, for group/version/resource lookups
	Namespaced bool
	Names      NameRule
}

// APIVersion returns group/version, or the version alone for the core group.
func (k *Kind) APIVersion() string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}

// builtinKinds are the kinds of a Kubernetes cluster's built-in API groups that components name
// in logs and events.
var builtinKinds = []Kind{
	{"Pod", "", "v1", "pods", true, Subdomain},
	{"Node", "", "v1", "nodes", false, Subdomain},
	{"Namespace", "", "v1", "namespaces", false, Label},
	{"Service", "", "v1", "services", true, Label1035},
	{"Endpoints", "", "v1", "endpoints", true, Subdomain},
	{"ConfigMap", "", "v1", "configmaps", true, Subdomain},
	{"Secret", "", "v1", "secrets", true, Subdomain},
	{"ServiceAccount", "", "v1", "serviceaccounts", true, Subdomain},
	{"PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", true, Subdomain},
	{"PersistentVolume", "", "v1", "persistentvolumes", false, Subdomain},
	{"ReplicationController", "", "v1", "replicationcontrollers", true, Subdomain},
	{"ResourceQuota", "", "v1", "resourcequotas", true, Subdomain},
	{"LimitRange", "", "v1", "limitranges", true, Subdomain},
	{"Event", "", "v1", "events", true, Subdomain},
	{"Deployment", "apps", "v1", "deployments", true, Subdomain},
	{"ReplicaSet", "apps", "v1", "replicasets", true, Subdomain},
	{"StatefulSet", "apps", "v1", "statefulsets", true, Subdomain},
	{"DaemonSet", "apps", "v1", "daemonsets", true, Subdomain},
	{"ControllerRevision", "apps", "v1", "controllerrevisions", true, Subdomain},
	{"Job", "batch", "v1", "jobs", true, Subdomain},
	{"CronJob", "batch", "v1", "cronjobs", true, Subdomain},
	{"HorizontalPodAutoscaler", "autoscaling", "v2", "horizontalpodautoscalers", true, Subdomain},
	{"EndpointSlice", "discovery.k8s.io", "v1", "endpointslices", true, Subdomain},
	{"Lease", "coordination.k8s.io", "v1", "leases", true, Subdomain},
	{"Ingress", "networking.k8s.io", "v1", "ingresses", true, Subdomain},
	{"IngressClass", "networking.k8s.io", "v1", "ingressclasses", false, Subdomain},
	{"NetworkPolicy", "networking.k8s.io", "v1", "networkpolicies", true, Subdomain},
	{"PodDisruptionBudget", "policy", "v1", "poddisruptionbudgets", true, Subdomain},
	{"StorageClass", "storage.k8s.io", "v1", "storageclasses", false, Subdomain},
	{"VolumeAttachment", "storage.k8s.io", "v1", "volumeattachments", false, Subdomain},
	{"CSIDriver", "storage.k8s.io", "v1", "csidrivers", false, Subdomain},
	{"CSINode", "storage.k8s.io", "v1", "csinodes", false, Subdomain},
	{"PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", false, Subdomain},
	{"Role", "rbac.authorization.k8s.io", "v1", "roles", true, PathSegment},
	{"RoleBinding", "rbac.authorization.k8s.io", "v1", "rolebindings", true, PathSegment},
	{"ClusterRole", "rbac.authorization.k8s.io", "v1", "clusterroles", false, PathSegment},
	{"ClusterRoleBinding", "rbac.authorization.k8s.io", "v1", "clusterrolebindings", false, PathSegment},
	{"CertificateSigningRequest", "certificates.k8s.io", "v1", "certificatesigningrequests", false, Subdomain},
	{"CustomResourceDefinition", "apiextensions.k8s.io", "v1", "customresourcedefinitions", false, Subdomain},
	{"MutatingWebhookConfiguration", "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", false, Subdomain},
	{"ValidatingWebhookConfiguration", "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", false, Subdomain},
	{"Event", "events.k8s.io", "v1", "events", true, Subdomain},
}

// Table is a kind table: the built-in kinds plus any added (custom resources). The zero value
// is not usable; use NewTable.
type Table struct {
	byGroupKind map[groupKind]*Kind
	// byKind holds, for a kind stated without an apiVersion, the kind klog and the components
	// mean: the first row of that kind (the core Event, not events.k8s.io's).
	byKind map[string]*Kind
}

type groupKind struct{ group, kind string }

// NewTable returns the built-in kind table with extra kinds added; an extra kind with the same
// group and kind as a built-in one replaces it.
func NewTable(extra ...Kind) *Table {
	t := &Table{byGroupKind: map[groupKind]*Kind{}, byKind: map[string]*Kind{}}
	add := func(k Kind) {
		row := &k
		t.byGroupKind[groupKind{k.Group, k.Kind}] = row
		if prev, ok := t.byKind[k.Kind]; !ok || (prev.Group == k.Group) {
			t.byKind[k.Kind] = row
		}
	}
	for _, k := range builtinKinds {
		add(k)
	}
	for _, k := range extra {
		add(k)
	}
	return t
}

var defaultTable = NewTable()

// Builtin returns the built-in kind table.
func Builtin() *Table { return defaultTable }

// Lookup returns the row of kind in the API group of apiVersion; with an empty apiVersion, the
// row klog means by the kind alone. A kind of another group (a Knative Service is not a core
// Service) is not found.
func (t *Table) Lookup(apiVersion, kind string) *Kind {
	if kind == "" {
		return nil
	}
	if apiVersion == "" {
		return t.byKind[kind]
	}
	group, _, ok := SplitAPIVersion(apiVersion)
	if !ok {
		return nil
	}
	return t.byGroupKind[groupKind{group, kind}]
}
