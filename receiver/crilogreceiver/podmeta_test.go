// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
)

// memPods is the podmeta contract served from memory, as the pod_metadata extension serves it
// from its watch (that extension is another component: its tests run it against the API
// server; the two together run in testbed).
type memPods struct {
	component.StartFunc
	component.ShutdownFunc
	mu   sync.Mutex
	pods map[string]*podmeta.Pod
}

func newMemPods(pods ...*podmeta.Pod) *memPods {
	m := &memPods{pods: map[string]*podmeta.Pod{}}
	for _, p := range pods {
		m.set(p)
	}
	return m
}

func (m *memPods) set(p *podmeta.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pods[p.UID] = p
}

func (m *memPods) PodByUID(uid string) (*podmeta.Pod, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pods[uid]
	return p, ok
}

func (m *memPods) PodByName(ns, name string) (*podmeta.Pod, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.pods {
		if p.Namespace == ns && p.Name == name {
			return p, true
		}
	}
	return nil, false
}

func (m *memPods) WaitPod(ctx context.Context, uid string) (*podmeta.Pod, bool) {
	<-ctx.Done()
	return m.PodByUID(uid)
}

func (*memPods) Subscribe(func(podmeta.Event)) func() { return func() {} }

var podsID = component.MustNewID("pod_metadata")

func hostWithPods(src *memPods) component.Host {
	h := hostWith(nil).(host)
	h.ext[podsID] = src
	return h
}

// testPod is a Pod as the harness's paths name it (uid "<name>-uid").
func testPod(ns, name string, owners ...podmeta.Owner) *podmeta.Pod {
	return &podmeta.Pod{
		UID: name + "-uid", Namespace: ns, Name: name, NodeName: "node-1", NamespaceUID: "ns-" + ns + "-uid",
		Labels: map[string]string{"app": name}, Annotations: map[string]string{"team": "payments"},
		NamespaceLabels: map[string]string{"tier": "prod"}, Owners: owners,
	}
}

func deploymentOwners(name string) []podmeta.Owner {
	return []podmeta.Owner{{Kind: podmeta.KindReplicaSet, Name: name + "-5d8f"}, {Kind: podmeta.KindDeployment, Name: name}}
}

func waitsBy(t *testing.T, tel *componenttest.Telemetry) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	m, err := tel.GetMetric("otelcol_receiver_cri_log_metadata_waits")
	if err != nil {
		return out
	}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := dp.Attributes.Value("outcome")
		out[v.AsString()] += dp.Value
	}
	return out
}

// TestPodMetadataAttributes: the configured attributes come from the Pod's metadata, in
// k8s_attributes' names, on every record.
func TestPodMetadataAttributes(t *testing.T) {
	root := t.TempDir()
	src := newMemPods(testPod("shop", "web", deploymentOwners("web")...),
		testPod("shop", "nightly-1-abcde", podmeta.Owner{Kind: podmeta.KindJob, Name: "nightly-1"}, podmeta.Owner{Kind: podmeta.KindCronJob, Name: "nightly"}))
	cfg := testConfig(root)
	cfg.PodMetadata = &podsID
	cfg.Extract.Metadata = append(cfg.Extract.Metadata, "k8s.namespace.uid")
	cfg.Extract.Labels = []FieldExtractConfig{{Key: "app"}, {Key: "tier", From: "namespace", TagName: "tier"}}
	cfg.Extract.Annotations = []FieldExtractConfig{{Key: "team"}}
	c := &collector{}
	startReceiver(t, cfg, c, hostWithPods(src))
	newPodLog(t, root, "shop", "web", "main", 0).write("stdout", "GET /", 0)
	newPodLog(t, root, "shop", "nightly-1-abcde", "main", 0).write("stdout", "backup done", 0)
	waitCount(t, c, 2)

	common := map[string]any{"k8s.node.name": "node-1", "otelcol_k8s.namespace.uid": "ns-shop-uid", "tier": "prod", "k8s.pod.annotations.team": "payments"}
	for _, tc := range []struct {
		body string
		want map[string]any
	}{
		{"GET /", map[string]any{"k8s.deployment.name": "web", "k8s.pod.labels.app": "web"}},
		{"backup done", map[string]any{"k8s.job.name": "nightly-1", "k8s.cronjob.name": "nightly", "k8s.pod.labels.app": "nightly-1-abcde"}},
	} {
		var res map[string]any
		for _, r := range c.snapshot() {
			if r.body == tc.body {
				res = r.res
			}
		}
		require.NotNil(t, res, tc.body)
		for k, v := range common {
			assert.Equal(t, v, res[k], "%s: %s", tc.body, k)
		}
		for k, v := range tc.want {
			assert.Equal(t, v, res[k], "%s: %s", tc.body, k)
		}
		assert.NotContains(t, res, "k8s.replicaset.name", "not in the default extract.metadata")
	}
}

// TestOptOutFilesNeverOpened: a Pod that opts out by annotation (or through its namespace's
// label: the source marks both Excluded) and a namespace left out by namespaces.exclude: their
// files are never opened; the selected Pod's lines arrive.
func TestOptOutFilesNeverOpened(t *testing.T) {
	root := t.TempDir()
	quiet := testPod("shop", "quiet")
	quiet.Excluded = true
	src := newMemPods(testPod("ns", "web", deploymentOwners("web")...), quiet, testPod("kube-system", "dns"))
	cfg := testConfig(root)
	cfg.PodMetadata = &podsID
	cfg.Namespaces.Exclude = []string{"kube-*"}
	c := &collector{}
	// The excluded Pods logged before the receiver started.
	newPodLog(t, root, "shop", "quiet", "main", 0).write("stdout", "secret 1", 0)
	newPodLog(t, root, "kube-system", "dns", "coredns", 0).write("stdout", "dns 1", 0)
	_, tel := startReceiver(t, cfg, c, hostWithPods(src))
	web := newPodLog(t, root, "ns", "web", "main", 0)
	web.write("stdout", "web 1", 0)
	waitCount(t, c, 1)
	// Gauges are recorded at most once a second: wait for a recording after web's file opened.
	require.Eventually(t, func() bool {
		return metricSum(t, tel, "otelcol_receiver_cri_log_files_excluded") == 2 &&
			metricSum(t, tel, "otelcol_receiver_cri_log_files_open") == 1
	}, 10*time.Second, 2*time.Millisecond, "only web's file is opened")
	requireExactly(t, c, map[string][]string{key("web", "main", "stdout"): {"web 1"}})
	assert.Empty(t, waitsBy(t, tel), "known Pods are not held")
}

// TestOptOutLater: a Pod that opts out while its file is open: the file is closed, and the
// next scans leave it out.
func TestOptOutLater(t *testing.T) {
	root := t.TempDir()
	web := testPod("ns", "web")
	src := newMemPods(web)
	cfg := testConfig(root)
	cfg.PodMetadata = &podsID
	c := &collector{}
	_, tel := startReceiver(t, cfg, c, hostWithPods(src))
	log := newPodLog(t, root, "ns", "web", "main", 0)
	log.write("stdout", "before", 0)
	waitCount(t, c, 1)
	excluded := *web
	excluded.Excluded = true
	src.set(&excluded)
	require.Eventually(t, func() bool {
		return metricSum(t, tel, "otelcol_receiver_cri_log_files_open") == 0 &&
			metricSum(t, tel, "otelcol_receiver_cri_log_files_excluded") == 1
	}, 10*time.Second, 2*time.Millisecond)
	requireExactly(t, c, map[string][]string{key("web", "main", "stdout"): {"before"}})
}

// TestNewPodHeldUntilMetadata: a Pod logs before the source knows it: its file is held, and
// its first line carries the workload attributes once the metadata arrives; without metadata
// the file is read after metadata_wait, path attributes only, and counted.
func TestNewPodHeldUntilMetadata(t *testing.T) {
	for _, tc := range []struct {
		name        string
		arrives     bool
		wait        time.Duration
		wantDeploy  any
		wantOutcome string
	}{
		{"metadata arrives", true, time.Minute, "web", "found"},
		{"metadata never arrives", false, 100 * time.Millisecond, nil, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			src := newMemPods()
			cfg := testConfig(root)
			cfg.PodMetadata = &podsID
			cfg.MetadataWait = tc.wait
			c := &collector{}
			_, tel := startReceiver(t, cfg, c, hostWithPods(src))
			newPodLog(t, root, "shop", "web", "main", 0).write("stdout", "first line", 0)
			waitFilesOpen(t, tel, 1)
			if tc.arrives {
				assert.Zero(t, c.count(), "held while its Pod is unknown")
				src.set(testPod("shop", "web", deploymentOwners("web")...))
			}
			waitCount(t, c, 1)
			res := c.snapshot()[0].res
			assert.Equal(t, tc.wantDeploy, res["k8s.deployment.name"])
			assert.Equal(t, "web", res["k8s.pod.name"], "the path's attributes are always there")
			assert.Equal(t, map[string]int64{tc.wantOutcome: 1}, waitsBy(t, tel))
		})
	}
}

func TestPodGate(t *testing.T) {
	known := testPod("shop", "web")
	out := testPod("shop", "quiet")
	out.Excluded = true
	src := newMemPods(known, out)
	for _, tc := range []struct {
		name             string
		include, exclude []string
		src              podmeta.Source
		path             string
		skip             bool
	}{
		{"no filter", nil, nil, nil, "/var/log/pods/shop_web_web-uid/main/0.log", false},
		{"namespace excluded", nil, []string{"kube-*"}, nil, "/var/log/pods/kube-system_dns_u1/c/0.log", true},
		{"namespace not included", []string{"shop", "web*"}, nil, nil, "/var/log/pods/other_a_u1/c/0.log", true},
		{"namespace included", []string{"shop"}, nil, nil, "/var/log/pods/shop_a_u1/c/0.log", false},
		{"exclude wins over include", []string{"*"}, []string{"shop"}, nil, "/var/log/pods/shop_a_u1/c/0.log", true},
		{"opted-out Pod", nil, nil, src, "/var/log/pods/shop_quiet_quiet-uid/main/0.log", true},
		{"opted-out Pod by name (containers link)", nil, nil, src, "/var/log/containers/quiet_shop_main-0123456789abcdef.log", true},
		{"unknown Pod is not skipped", nil, nil, src, "/var/log/pods/shop_new_new-uid/main/0.log", false},
		{"older layout: namespace from metadata", nil, []string{"shop"}, src, "/var/log/pods/web-uid/main_0.log", true},
		{"unparsed path is not skipped", []string{"shop"}, nil, src, "/tmp/x.log", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := podGate{include: tc.include, exclude: tc.exclude, src: tc.src}
			assert.Equal(t, tc.skip, g.skip(tc.path))
		})
	}
}
