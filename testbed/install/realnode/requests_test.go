// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness/traced"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localxray"
)

// auditPolicy records, at the Metadata level, every request of the product's service accounts
// and nothing else: the API server's own account of what our Pods asked of it.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts:` + namespace + `"]
  - level: None
`

// podNameExtra is the audit user's extra that names the Pod a bound service account token
// belongs to.
const podNameExtra = "authentication.kubernetes.io/pod-name"

// auditEvent is what the tests read of an audit.k8s.io/v1 Event.
type auditEvent struct {
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string              `json:"username"`
		Extra    map[string][]string `json:"extra"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
}

// ownerResources are the kinds a node agent fetches as owners of its Pods.
var ownerResources = []string{"replicasets", "deployments", "daemonsets", "statefulsets", "jobs", "cronjobs"}

// requestCount is what one phase's collectors asked of the API server, by client ("node agent",
// "events collector").
type requestCount struct {
	// requests by "<client> <verb> <resource>[/<subresource>]"; a watch counts when it starts.
	requests map[string]int
	// watches by "<client> <resource> <selectors>": the distinct watches (a watch restarted
	// after its timeout is the same one).
	watches map[string]int
	// ownerGets by "<client> <resource> <namespace>/<name>".
	ownerGets map[string]int
	// leases by "<client> <namespace>/<name>": the Leases a client read or wrote.
	leases map[string]int
	// gets by "<client> <user agent> <resource>": which component made the GETs.
	gets map[string]int
	// agents are the user agents seen, by client.
	agents map[string]map[string]bool
}

// auditSize is the audit log's current size: a later readAudit(from) reads what came after.
func auditSize(t *testing.T, e *env) int64 {
	t.Helper()
	st, err := os.Stat(e.node.AuditLog())
	require.NoError(t, err, "the API server's audit log")
	return st.Size()
}

// readAudit counts the audit events after offset from of the Pods named in clients (Pod name ->
// client), each request once (a watch when its response started, any other when complete).
func readAudit(t *testing.T, e *env, from int64, clients map[string]string) requestCount {
	t.Helper()
	f, err := os.Open(e.node.AuditLog())
	require.NoError(t, err)
	defer func() { _ = f.Close() }() // read-only
	_, err = f.Seek(from, io.SeekStart)
	require.NoError(t, err)
	rc := requestCount{requests: map[string]int{}, watches: map[string]int{}, ownerGets: map[string]int{}, leases: map[string]int{}, gets: map[string]int{}, agents: map[string]map[string]bool{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.ObjectRef == nil || seen[ev.AuditID] {
			continue // a partial last line, or a request of no resource (discovery)
		}
		if ev.Verb == "watch" && ev.Stage != "ResponseStarted" || ev.Verb != "watch" && ev.Stage != "ResponseComplete" {
			continue
		}
		pods := ev.User.Extra[podNameExtra]
		if len(pods) != 1 {
			continue
		}
		client, ok := clients[pods[0]]
		if !ok {
			continue // a Pod of the release before the phase's restart
		}
		seen[ev.AuditID] = true
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		rc.requests[client+" "+ev.Verb+" "+res]++
		if rc.agents[client] == nil {
			rc.agents[client] = map[string]bool{}
		}
		rc.agents[client][ev.UserAgent] = true
		switch {
		case ev.Verb == "watch":
			rc.watches[client+" "+res+" "+watchSelectors(ev.RequestURI, ev.ObjectRef.Namespace)]++
		case ev.Verb == "get" && slices.Contains(ownerResources, res):
			rc.ownerGets[client+" "+res+" "+ev.ObjectRef.Namespace+"/"+ev.ObjectRef.Name]++
		}
		if res == "leases" {
			rc.leases[client+" "+ev.ObjectRef.Namespace+"/"+ev.ObjectRef.Name]++
		}
		if ev.Verb == "get" {
			rc.gets[client+" "+ev.UserAgent+" "+res]++
		}
	}
	require.NoError(t, sc.Err())
	return rc
}

// watchSelectors is what tells watches of one resource apart: the namespace and selectors of
// the request (not its resource version or timeout).
func watchSelectors(uri, ns string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	q := u.Query()
	parts := []string{"namespace=" + ns}
	for _, k := range []string{"fieldSelector", "labelSelector"} {
		if v := q.Get(k); v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	if ns == "" {
		parts[0] = "all namespaces"
	}
	return strings.Join(parts, " ")
}

// restartProduct deletes the release's Pods and waits for their replacements to be Ready; it
// returns them by name with their client ("node agent", "events collector").
func restartProduct(t *testing.T, e *env) map[string]string {
	t.Helper()
	ctx := context.Background()
	cs := e.node.Client
	waitProductRolledOut(t, e)
	old, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	gone := map[types.UID]bool{}
	for _, p := range old.Items {
		gone[p.UID] = true
		require.NoError(t, cs.CoreV1().Pods(namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}))
	}
	clients := map[string]string{}
	require.Eventually(t, func() bool {
		list, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		clients = map[string]string{}
		for i := range list.Items {
			p := &list.Items[i]
			if gone[p.UID] {
				return false // not gone yet: its requests would still be its own, but wait
			}
			if p.DeletionTimestamp != nil || !podReady(p) {
				return false
			}
			clients[p.Name] = "events collector"
			if p.Labels["app.kubernetes.io/name"] == release+"-node" {
				clients[p.Name] = "node agent"
			}
		}
		return len(clients) == len(old.Items)
	}, 3*time.Minute, 500*time.Millisecond, "the release's Pods after a restart")
	return clients
}

// waitProductRolledOut waits until the release's DaemonSet and Deployments run their current
// template everywhere (Helm's wait can return before the controllers saw an upgrade).
func waitProductRolledOut(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	apps := e.node.Client.AppsV1()
	require.Eventually(t, func() bool {
		dss, err := apps.DaemonSets(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, d := range dss.Items {
			st := d.Status
			if st.ObservedGeneration < d.Generation || st.UpdatedNumberScheduled != st.DesiredNumberScheduled ||
				st.NumberAvailable != st.DesiredNumberScheduled || st.CurrentNumberScheduled != st.DesiredNumberScheduled {
				return false
			}
		}
		deps, err := apps.Deployments(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, d := range deps.Items {
			st, want := d.Status, *d.Spec.Replicas
			if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != want || st.AvailableReplicas != want || st.Replicas != want {
				return false
			}
		}
		pods, err := e.node.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.DeletionTimestamp != nil || !podReady(p) {
				return false
			}
		}
		return true
	}, 3*time.Minute, 500*time.Millisecond, "the release rolled out")
}

// requestWorkload is the same work in both phases: a Deployment of two Pods rolled out, then
// rolled out again (a second ReplicaSet), two bare Pods created and deleted, then the
// Deployment deleted. It returns once the node agent has seen all of it: each Pod's lines
// stored with its workload's name (pod_metadata's owner look-up done), and with tracing on
// each Pod's lifecycle trace at the X-Ray endpoint.
func requestWorkload(t *testing.T, e *env, name string, xray *localxray.Server) {
	t.Helper()
	ensureWorkNamespace(t, e)
	ctx := context.Background()
	cs := e.node.Client
	replicas := int32(2)
	labels := map[string]string{"app": name}
	tmpl := loggenPod(name, 10, 100, 5)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workNamespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: tmpl.Spec},
		},
	}
	dep.Spec.Template.Spec.Containers[0].Args = []string{"-rate", "10", "-size", "100", "-count", "5"}
	_, err := cs.AppsV1().Deployments(workNamespace).Create(ctx, dep, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.AppsV1().Deployments(workNamespace).Delete(ctx, name, metav1.DeleteOptions{}) })
	waitRolledOut(t, e, name, 1)
	// A second rollout: a new ReplicaSet, its Pods, the old ones deleted.
	patch := `{"spec":{"template":{"metadata":{"annotations":{"realnode/rollout":"2"}}}}}`
	_, err = cs.AppsV1().Deployments(workNamespace).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
	waitRolledOut(t, e, name, 2)

	bare := []*corev1.Pod{loggenPod(name+"-bare-a", 10, 100, 5), loggenPod(name+"-bare-b", 10, 100, 5)}
	ws := []loggen{{name: bare[0].Name, streams: []string{"stdout", "stderr"}, lines: 5}, {name: bare[1].Name, streams: []string{"stdout", "stderr"}, lines: 5}}
	runPods(t, e, bare, ws, 2*time.Minute)

	// Every Pod of the phase: the Deployment's (both ReplicaSets', the deleted ones included)
	// and the bare ones.
	var pods []string
	require.Eventually(t, func() bool {
		pods = []string{bare[0].Name, bare[1].Name}
		evs, _ := e.storedEvents() // what could be read; the next round reads again
		named := map[string]bool{}
		for _, ev := range evs {
			var m struct {
				Resource map[string]any `json:"resource"`
			}
			if json.Unmarshal([]byte(ev.Message), &m) != nil {
				continue
			}
			pod, _ := m.Resource["k8s.pod.name"].(string)
			if d, _ := m.Resource["k8s.deployment.name"].(string); d == name && strings.HasPrefix(pod, name+"-") {
				named[pod] = true
			}
			if pod == bare[0].Name || pod == bare[1].Name {
				named[pod] = true
			}
		}
		for p := range named {
			if !slices.Contains(pods, p) {
				pods = append(pods, p)
			}
		}
		return len(named) == 2+2*int(replicas)
	}, 2*time.Minute, time.Second, "the phase's Pods with lines stored under their workload: %v", pods)
	if xray != nil {
		require.Eventually(t, func() bool {
			var batches []ptrace.Traces
			for _, b := range xray.Batches() {
				batches = append(batches, b.Traces)
			}
			started := map[string]bool{}
			for _, s := range traced.AllSpans(batches...) {
				if s.Name() != "Pod start" {
					continue
				}
				if v, ok := s.Attributes().Get("otelcol_k8s.object.name"); ok {
					started[v.Str()] = true
				}
			}
			for _, p := range pods {
				if !started[p] {
					return false
				}
			}
			return true
		}, 2*time.Minute, time.Second, "a lifecycle trace of each of the phase's Pods %v", pods)
	}
	deletePods(t, e, bare)
	foreground := metav1.DeletePropagationForeground
	require.NoError(t, cs.AppsV1().Deployments(workNamespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &foreground}))
	require.Eventually(t, func() bool {
		list, err := cs.CoreV1().Pods(workNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		return err == nil && len(list.Items) == 0
	}, 2*time.Minute, 500*time.Millisecond, "the Deployment's Pods gone")
}

// waitRolledOut waits until the Deployment's revision rev is rolled out: every replica
// updated and available, no old one left.
func waitRolledOut(t *testing.T, e *env, name string, rev int) {
	t.Helper()
	require.Eventually(t, func() bool {
		d, err := e.node.Client.AppsV1().Deployments(workNamespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || d.Status.ObservedGeneration < d.Generation {
			return false
		}
		want := *d.Spec.Replicas
		return d.Annotations["deployment.kubernetes.io/revision"] == strconv.Itoa(rev) &&
			d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want && d.Status.Replicas == want
	}, 2*time.Minute, 500*time.Millisecond, "Deployment %s revision %d rolled out", name, rev)
}

// TestTracingAPIRequests: the API server's requests of the release's Pods (its audit log,
// by Pod, verb and resource), tracing off, then on, each phase with freshly started collectors
// and the same workload (requestWorkload). The node agent keeps the same watches, exactly one
// node-scoped Pod watch, and with tracing on adds only owner GETs, at most one per owner beside
// pod_metadata's; the events collector keeps the same watches and the same Lease (the rollout
// traces follow the Events it watches) and adds GETs only, printed.
func TestTracingAPIRequests(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	ensureWorkNamespace(t, e)
	phase := func(on bool) requestCount {
		name, xray := "reqs-off", (*localxray.Server)(nil)
		if on {
			name, xray = "reqs-on", tracingOn(t, e)
		}
		from := auditSize(t, e)
		clients := restartProduct(t, e)
		requestWorkload(t, e, name, xray)
		return readAudit(t, e, from, clients)
	}
	off := phase(false)
	on := phase(true)

	t.Logf("API requests of the release's Pods (the API server's audit log), tracing off and on, same workload:\n%s", requestTable(off, on))
	t.Logf("user agents: off %v, on %v", off.agents, on.agents)

	// The node agent: the same watches, one node-scoped Pod watch.
	nodeWatches := func(rc requestCount) []string {
		var out []string
		for k := range rc.watches {
			if strings.HasPrefix(k, "node agent ") {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	want := []string{"node agent pods all namespaces fieldSelector=spec.nodeName=kubenode"}
	assert.Equal(t, want, nodeWatches(off), "the node agent's watches, tracing off")
	assert.Equal(t, want, nodeWatches(on), "the node agent's watches, tracing on")
	// Everything of the node agent but owner GETs is the same.
	for _, k := range unionKeys(off.requests, on.requests) {
		if !strings.HasPrefix(k, "node agent ") {
			continue
		}
		if _, res, _ := strings.Cut(strings.TrimPrefix(k, "node agent "), " "); strings.HasPrefix(k, "node agent get ") && slices.Contains(ownerResources, res) {
			continue
		}
		assert.Equal(t, off.requests[k], on.requests[k], "%s: tracing off and on", k)
	}
	// Owner GETs: with tracing on at most one more per owner than pod_metadata's own (at most
	// one per owner: the Deployment's name from a ReplicaSet), so at most two per owner.
	for k, n := range off.ownerGets {
		if strings.HasPrefix(k, "node agent ") {
			assert.LessOrEqual(t, n, 1, "%s: tracing off", k)
		}
	}
	for k, n := range on.ownerGets {
		if strings.HasPrefix(k, "node agent ") {
			assert.LessOrEqual(t, n, 2, "%s: tracing on", k)
		}
	}
	// The events collector: the same watches and the same Lease with tracing off and on (issue
	// 35: kube_lifecycle's rollouts follow the Events kube_events watches, with GETs); what
	// tracing adds is GETs only.
	collectorKeys := func(m map[string]int) []string {
		var out []string
		for k := range m {
			if strings.HasPrefix(k, "events collector ") {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	assert.NotEmpty(t, collectorKeys(off.watches), "the events collector's watches, tracing off")
	assert.Equal(t, collectorKeys(off.watches), collectorKeys(on.watches), "the events collector's watches, tracing off and on")
	assert.Equal(t, collectorKeys(off.leases), collectorKeys(on.leases), "the events collector's Leases, tracing off and on")
	var addedGets []string
	for _, k := range unionKeys(off.requests, on.requests) {
		if !strings.HasPrefix(k, "events collector ") || off.requests[k] == on.requests[k] {
			continue
		}
		verb, _, _ := strings.Cut(strings.TrimPrefix(k, "events collector "), " ")
		switch verb {
		case "get":
			addedGets = append(addedGets, fmt.Sprintf("%s: %d -> %d", k, off.requests[k], on.requests[k]))
		case "update":
			// the Lease's renewals and the checkpoint's writes: by time, not by tracing
		default:
			assert.Equal(t, off.requests[k], on.requests[k], "%s: tracing off and on", k)
		}
	}
	t.Logf("the events collector's GETs, tracing off -> on:\n%s", strings.Join(addedGets, "\n"))
	for _, k := range unionKeys(off.gets, on.gets) {
		if strings.HasPrefix(k, "events collector ") {
			t.Logf("GETs by component: %s: %d -> %d", k, off.gets[k], on.gets[k])
		}
	}
	for _, k := range unionKeys(off.ownerGets, on.ownerGets) {
		if strings.HasPrefix(k, "events collector ") {
			t.Logf("GETs by object: %s: %d -> %d", k, off.ownerGets[k], on.ownerGets[k])
		}
	}
}

// requestTable prints both phases' counts side by side: requests, then distinct watches, then
// the owner GETs per owner.
func requestTable(off, on requestCount) string {
	var b strings.Builder
	row := func(k string, x, y int) { fmt.Fprintf(&b, "%-72s %5d %5d\n", k, x, y) }
	fmt.Fprintf(&b, "%-72s %5s %5s\n", "requests (client verb resource)", "off", "on")
	for _, k := range unionKeys(off.requests, on.requests) {
		row(k, off.requests[k], on.requests[k])
	}
	fmt.Fprintf(&b, "%-72s %5s %5s\n", "watches started (client resource scope)", "off", "on")
	for _, k := range unionKeys(off.watches, on.watches) {
		row(k, off.watches[k], on.watches[k])
	}
	fmt.Fprintf(&b, "%-72s %5s %5s\n", "owner GETs (client resource namespace/name)", "off", "on")
	for _, k := range unionKeys(off.ownerGets, on.ownerGets) {
		row(k, off.ownerGets[k], on.ownerGets[k])
	}
	return b.String()
}

// unionKeys returns the keys of both maps, sorted.
func unionKeys(a, b map[string]int) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	return sortedKeys(set)
}
