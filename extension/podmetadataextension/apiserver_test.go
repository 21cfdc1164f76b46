// SPDX-License-Identifier: Apache-2.0

package podmetadataextension

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
)

// TestAgainstAPIServer writes, as the controllers would, a Deployment's ReplicaSet, a CronJob's
// Job, StatefulSet and bare Pods: 110 Pods on node-1, more on node-2, a namespace that opts out
// by label and a Pod that opts out by annotation. It checks that the extension holds exactly
// node-1's Pods from one Pod watch (counted at the API server), resolves the owner chains with
// one GET per owner and per namespace, follows updates and deletes, bounds what it holds, and
// that WaitPod returns a Pod created after the wait began.
func TestAgainstAPIServer(t *testing.T) {
	cluster := kubecluster.Start(t)
	restCfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	require.NoError(t, err)
	restCfg.QPS, restCfg.Burst = 500, 1000
	kc, err := kubernetes.NewForConfig(restCfg)
	require.NoError(t, err)
	ctx := context.Background()

	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"team": "web"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "quiet", Labels: map[string]string{podmeta.ExcludeLabel: "true"}}},
	} {
		_, err = kc.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		require.NoError(t, err)
		// No controller manager runs: create the service account it would.
		_, err = kc.CoreV1().ServiceAccounts(ns.Name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	controller := func(apiVersion, kind, name string, uid k8stypes.UID) []metav1.OwnerReference {
		yes := true
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes}}
	}
	labels := map[string]string{"app": "web"}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "main:1"}}}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec}

	deploy, err := kc.AppsV1().Deployments("shop").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	rs, err := kc.AppsV1().ReplicaSets("shop").Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-5d8f", Namespace: "shop", OwnerReferences: controller("apps/v1", "Deployment", "web", deploy.UID),
			// kept for trace_context (podmeta.Owner.Annotations): only the trace-context keys
			Annotations: map[string]string{
				"trace.kubernetes.io/context":       "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
				"deployment.kubernetes.io/revision": "1",
			},
		},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	jobTemplate := template
	jobTemplate.Spec.RestartPolicy = corev1.RestartPolicyNever
	cron, err := kc.BatchV1().CronJobs("shop").Create(ctx, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "shop"},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: jobTemplate},
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	job, err := kc.BatchV1().Jobs("shop").Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly-29100", Namespace: "shop", OwnerReferences: controller("batch/v1", "CronJob", "nightly", cron.UID)},
		Spec:       batchv1.JobSpec{Template: jobTemplate},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	type podWant struct {
		owners   []string // kind/name, nearest first
		excluded bool
	}
	want := map[string]podWant{} // "namespace/name" of node-1's Pods
	createPod := func(ns, name, node string, owners []metav1.OwnerReference, annotations map[string]string) *corev1.Pod {
		spec := podSpec
		spec.NodeName = node
		p, err := kc.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: annotations, OwnerReferences: owners},
			Spec:       spec,
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		return p
	}
	var wg sync.WaitGroup
	add := func(ns, name string, owners []metav1.OwnerReference, annotations map[string]string, w podWant) {
		want[ns+"/"+name] = w
		wg.Go(func() { createPod(ns, name, "node-1", owners, annotations) })
	}
	for i := range 100 {
		add("shop", fmt.Sprintf("web-5d8f-%03d", i), controller("apps/v1", "ReplicaSet", rs.Name, rs.UID), nil,
			podWant{owners: []string{"ReplicaSet/web-5d8f", "Deployment/web"}})
	}
	for i := range 4 {
		add("shop", fmt.Sprintf("nightly-29100-%d", i), controller("batch/v1", "Job", job.Name, job.UID), nil,
			podWant{owners: []string{"Job/nightly-29100", "CronJob/nightly"}})
	}
	for i := range 3 { // the StatefulSet itself is not looked up: the Pod names it
		add("shop", fmt.Sprintf("db-%d", i), controller("apps/v1", "StatefulSet", "db", "6b1c0f1e-0000-4000-8000-000000000001"), nil,
			podWant{owners: []string{"StatefulSet/db"}})
	}
	add("shop", "bare", nil, nil, podWant{})
	add("shop", "opted-out", nil, map[string]string{podmeta.ExcludeAnnotation: "true"}, podWant{excluded: true})
	add("quiet", "batch-runner", nil, nil, podWant{excluded: true})
	for i := range 20 {
		wg.Go(func() { createPod("shop", fmt.Sprintf("elsewhere-%d", i), "node-2", nil, nil) })
	}
	wg.Wait()
	require.Len(t, want, 110)

	start := func(t *testing.T, tel *componenttest.Telemetry, adjust func(*Config)) *podMetadataExtension {
		cfg := createDefaultConfig().(*Config)
		cfg.Kubeconfig, cfg.NodeName = cluster.Kubeconfig, "node-1"
		if adjust != nil {
			adjust(cfg)
		}
		require.NoError(t, cfg.Validate())
		e, err := newExtension(cfg, tel.NewTelemetrySettings())
		require.NoError(t, err)
		require.NoError(t, e.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, e.Shutdown(ctx)) })
		return e
	}
	watchesBefore := podWatches(t, cluster)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(ctx)) })
	e := start(t, tel, nil)

	t.Run("one watch, node-1's Pods, owner chains", func(t *testing.T) {
		require.Eventually(t, func() bool { return podWatches(t, cluster) == watchesBefore+1 }, 10*time.Second, 20*time.Millisecond,
			"the extension opens exactly one Pod watch")
		assert.Len(t, e.uids(), 110, "every Pod of node-1 and nothing else")
		for key, w := range want {
			ns, name, _ := strings.Cut(key, "/")
			p, ok := e.PodByName(ns, name)
			require.True(t, ok, key)
			byUID, ok := e.PodByUID(p.UID)
			require.True(t, ok)
			assert.Same(t, p, byUID)
			var got []string
			for _, o := range p.Owners {
				got = append(got, o.Kind+"/"+o.Name)
			}
			assert.Equal(t, w.owners, got, key)
			assert.Equal(t, w.excluded, p.Excluded, key)
			assert.False(t, p.Incomplete, key)
			assert.Equal(t, "node-1", p.NodeName)
		}
		web, _ := e.PodByName("shop", "web-5d8f-007")
		assert.Equal(t, "web", web.Owner(podmeta.KindDeployment))
		// The ReplicaSet it read, with its trace-context annotations, for trace_context; the
		// Deployment, known only from the ReplicaSet's reference, is not read.
		assert.False(t, web.Owners[0].Read.IsZero())
		assert.Equal(t, rs.CreationTimestamp.Time, web.Owners[0].Created)
		assert.Equal(t, map[string]string{"trace.kubernetes.io/context": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, web.Owners[0].Annotations)
		assert.True(t, web.Owners[1].Read.IsZero())
		assert.Equal(t, map[string]string{"team": "web", "kubernetes.io/metadata.name": "shop"}, web.NamespaceLabels)
		assert.NotEmpty(t, web.NamespaceUID)
		_, ok := e.PodByName("shop", "elsewhere-0")
		assert.False(t, ok, "another node's Pod")
		// One GET per owner and per namespace: the caches answer the other 109 Pods.
		assert.Equal(t, map[string]int64{"replicasets/ok": 1, "jobs/ok": 1, "namespaces/ok": 2},
			lookupsBy(t, tel))
		assert.Equal(t, map[string]int64{"": 110}, sumBy(t, tel, "extension_pod_metadata_pods", ""))
	})

	t.Run("updates, deletes and waits", func(t *testing.T) {
		var mu sync.Mutex
		var events []string
		unsubscribe := e.Subscribe(func(ev podmeta.Event) {
			_, held := e.PodByUID(ev.Pod.UID) // a subscriber may read the source
			mu.Lock()
			defer mu.Unlock()
			events = append(events, fmt.Sprintf("%d %s excluded=%v held=%v", ev.Type, ev.Pod.Name, ev.Pod.Excluded, held))
		})
		defer unsubscribe()

		// A Pod that opts out later.
		bare, err := kc.CoreV1().Pods("shop").Get(ctx, "bare", metav1.GetOptions{})
		require.NoError(t, err)
		bare.Annotations = map[string]string{podmeta.ExcludeAnnotation: " True "}
		_, err = kc.CoreV1().Pods("shop").Update(ctx, bare, metav1.UpdateOptions{})
		require.NoError(t, err)
		require.Eventually(t, func() bool { p, _ := e.PodByName("shop", "bare"); return p.Excluded }, 10*time.Second, 10*time.Millisecond)

		// Deleted (grace period 0: no kubelet runs to finish a graceful deletion).
		zero := int64(0)
		require.NoError(t, kc.CoreV1().Pods("shop").Delete(ctx, "db-2", metav1.DeleteOptions{GracePeriodSeconds: &zero}))
		require.Eventually(t, func() bool { _, ok := e.PodByName("shop", "db-2"); return !ok }, 10*time.Second, 10*time.Millisecond)

		// A wait that begins before the Pod exists ends when it is published, owners resolved.
		got := make(chan *podmeta.Pod, 1)
		waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		created := make(chan k8stypes.UID, 1)
		go func() {
			uid := <-created
			p, _ := e.WaitPod(waitCtx, string(uid))
			got <- p
		}()
		p := createPod("shop", "web-5d8f-new", "node-1", controller("apps/v1", "ReplicaSet", rs.Name, rs.UID), nil)
		created <- p.UID
		select {
		case w := <-got:
			require.NotNil(t, w, "WaitPod returned without the Pod")
			assert.Equal(t, "web", w.Owner(podmeta.KindDeployment))
		case <-time.After(15 * time.Second):
			t.Fatal("WaitPod did not return")
		}
		// A wait for a Pod that never comes ends with the caller's context.
		short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancelShort()
		_, ok := e.WaitPod(short, "no-such-uid")
		assert.False(t, ok)
		e.mu.RLock()
		assert.Empty(t, e.waiters, "finished waits leave nothing behind")
		e.mu.RUnlock()

		mu.Lock()
		defer mu.Unlock()
		// A deletion is an update (deletionTimestamp set), then the delete.
		assert.Equal(t, []string{
			"1 bare excluded=true held=true", "1 db-2 excluded=false held=true", "2 db-2 excluded=false held=false",
			"1 web-5d8f-new excluded=false held=true",
		}, events)
	})

	t.Run("pod_status: still one watch, status trimmed and followed", func(t *testing.T) {
		tel := componenttest.NewTelemetry()
		t.Cleanup(func() { require.NoError(t, tel.Shutdown(ctx)) })
		before := podWatches(t, cluster)
		full := start(t, tel, func(c *Config) { c.PodStatus = true })
		require.Eventually(t, func() bool { return podWatches(t, cluster) == before+1 }, 10*time.Second, 20*time.Millisecond,
			"pod_status replaces the metadata watch by one Pod watch")
		assert.True(t, full.WatchesStatus())
		assert.False(t, e.WatchesStatus(), "without pod_status the watch stays metadata-only")
		metaOnly, _ := e.PodByName("shop", "web-5d8f-001")
		assert.Nil(t, metaOnly.Status)

		// SubscribeAll: every Pod held now, every change after.
		changes := make(chan podmeta.Event, 16)
		held, unsubscribe := full.SubscribeAll(func(ev podmeta.Event) {
			if ev.Pod.Name == "web-5d8f-002" {
				changes <- ev
			}
		})
		defer unsubscribe()
		assert.Len(t, held, len(full.uids()))

		// The kubelet's status update, written as it would.
		pod, err := kc.CoreV1().Pods("shop").Get(ctx, "web-5d8f-002", metav1.GetOptions{})
		require.NoError(t, err)
		ready := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
		pod.Status = corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ready, Message: "not kept"}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "main", Ready: true, RestartCount: 1, Image: "main:1", ImageID: "not kept",
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ready}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: ready}},
			}},
		}
		_, err = kc.CoreV1().Pods("shop").UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		require.NoError(t, err)
		select {
		case ev := <-changes:
			require.Equal(t, podmeta.Upserted, ev.Type)
			require.NotNil(t, ev.Pod.Status)
			assert.Equal(t, &podmeta.Status{
				Phase:      "Running",
				Conditions: []podmeta.Condition{{Type: "Ready", Status: "True", LastTransitionTime: ready.Time}},
				Containers: []podmeta.ContainerStatus{{
					Name: "main", Ready: true, RestartCount: 1,
					State:           podmeta.ContainerState{Running: &podmeta.Running{StartedAt: ready.Time}},
					LastTermination: podmeta.ContainerState{Terminated: &podmeta.Terminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: ready.Time}},
				}},
			}, normalized(ev.Pod.Status))
			assert.Equal(t, "web", ev.Pod.Owner(podmeta.KindDeployment), "owners as without pod_status")
			assert.False(t, ev.Pod.Created.IsZero())
		case <-time.After(10 * time.Second):
			t.Fatal("the status update was not delivered")
		}
	})

	t.Run("bounded", func(t *testing.T) {
		tel := componenttest.NewTelemetry()
		t.Cleanup(func() { require.NoError(t, tel.Shutdown(ctx)) })
		small := start(t, tel, func(c *Config) { c.MaxPods = 50 })
		assert.Len(t, small.uids(), 50)
		assert.Equal(t, map[string]int64{"": 60}, sumBy(t, tel, "extension_pod_metadata_pods_dropped", ""))
	})

	t.Run("unreachable owners are counted and the Pod is published without them", func(t *testing.T) {
		tel := componenttest.NewTelemetry()
		t.Cleanup(func() { require.NoError(t, tel.Shutdown(ctx)) })
		// One lookup times out at once: an expired deadline fails every GET.
		limited := start(t, tel, func(c *Config) { c.LookupTimeout = time.Nanosecond })
		p, ok := limited.PodByName("shop", "web-5d8f-001")
		require.True(t, ok)
		assert.True(t, p.Incomplete)
		assert.Equal(t, []string{"ReplicaSet"}, kinds(p.Owners), "what the Pod itself says is kept")
		assert.Equal(t, map[string]int64{"replicasets/error": 1, "jobs/error": 1, "namespaces/error": 2}, lookupsBy(t, tel),
			"a failed look-up is remembered for a while, not repeated for each Pod")
	})
}

func kinds(owners []podmeta.Owner) []string {
	var out []string
	for _, o := range owners {
		out = append(out, o.Kind)
	}
	return out
}

// podWatches returns the Pod watches the API server is serving, from its
// apiserver_longrunning_requests gauge.
func podWatches(t *testing.T, c *kubecluster.Cluster) int {
	t.Helper()
	hc, err := c.HTTPClient(true)
	require.NoError(t, err)
	resp, err := hc.Get(c.Host + "/metrics")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }() // read-only
	require.Equal(t, 200, resp.StatusCode)
	n, found := 0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_longrunning_requests{") {
			continue
		}
		found = true
		if !strings.Contains(line, `resource="pods"`) || !strings.Contains(line, `verb="WATCH"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		require.NoError(t, err, line)
		n += int(v)
	}
	require.NoError(t, sc.Err())
	require.True(t, found, "the API server exposes apiserver_longrunning_requests")
	return n
}

// lookupsBy returns the lookups counter by "resource/outcome".
func lookupsBy(t *testing.T, tel *componenttest.Telemetry) map[string]int64 {
	t.Helper()
	m, err := tel.GetMetric("otelcol_extension_pod_metadata_lookups")
	require.NoError(t, err)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok)
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		r, _ := dp.Attributes.Value("resource")
		o, _ := dp.Attributes.Value("outcome")
		out[r.AsString()+"/"+o.AsString()] += dp.Value
	}
	return out
}

// sumBy returns an int64 sum's values by the attribute key ("" for one total).
func sumBy(t *testing.T, tel *componenttest.Telemetry, name, key string) map[string]int64 {
	t.Helper()
	m, err := tel.GetMetric("otelcol_" + name)
	require.NoError(t, err)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is not an int64 sum", name)
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		v, _ := dp.Attributes.Value(attribute.Key(key))
		out[v.AsString()] += dp.Value
	}
	return out
}

// normalized returns s with its times in UTC, as the decoder's differ only in location.
func normalized(s *podmeta.Status) *podmeta.Status {
	cp := *s
	utc := func(t *time.Time) { *t = t.UTC() }
	utc(&cp.StartTime)
	cp.Conditions = append([]podmeta.Condition(nil), s.Conditions...)
	for i := range cp.Conditions {
		utc(&cp.Conditions[i].LastTransitionTime)
	}
	cp.Containers = append([]podmeta.ContainerStatus(nil), s.Containers...)
	for i := range cp.Containers {
		c := &cp.Containers[i]
		if r := c.State.Running; r != nil {
			c.State.Running = &podmeta.Running{StartedAt: r.StartedAt.UTC()}
		}
		if t := c.LastTermination.Terminated; t != nil {
			tt := *t
			utc(&tt.StartedAt)
			utc(&tt.FinishedAt)
			c.LastTermination.Terminated = &tt
		}
	}
	return &cp
}
