// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
)

// TestShippedTracesResource: in the shipped node configuration with tracing on, the spans
// kube_lifecycle makes and the spans the OTLP receiver takes in (as a kubelet sends its own)
// leave with the same resource attributes: the cluster and the node from the DaemonSet's
// environment, and service.name, the sender's own where it set one (the kubelet's), else the
// node agent's (kube_lifecycle's spans).
func TestShippedTracesResource(t *testing.T) {
	bin := binary(t)
	a := startAPITest(t, 2*time.Minute, "shop")
	cluster, kc, ctx := a.cluster, a.kc, a.ctx
	pod, err := kc.CoreV1().Pods("shop").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	xr, xrayBase := startXRay(t)
	otlpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	health := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg, env := shippedNodeConfigFrom(t, harness.ShippedTracesNodeConfigMap, filepath.Join(t.TempDir(), "records.jsonl"), harness.Local{
		NodeRoot: t.TempDir(), StateDir: t.TempDir(), Endpoint: "http://127.0.0.1:1", HealthAddr: health, Kubeconfig: cluster.Kubeconfig,
		TracesEndpoint: xrayBase, OTLPHTTPAddr: otlpAddr,
		Env: map[string]string{
			"AWS_REGION": "us-east-1", "K8S_NODE_NAME": "node-1", "CLUSTER_NAME": "shop-cluster",
			"AWS_ACCESS_KEY_ID": xrayKey, "AWS_SECRET_ACCESS_KEY": xraySecret, "AWS_EC2_METADATA_DISABLED": "true",
		},
	})
	runCollector(t, bin, cfg, env, health)

	// The Pod starts after the collector did (a Pod Ready before is not traced again).
	at := metav1.NewTime(time.Now().UTC().Truncate(time.Second).Add(time.Second))
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
	}, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}}}}
	if _, err := kc.CoreV1().Pods("shop").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// A kubelet's span, over OTLP/HTTP.
	kubeletTrace := pcommon.TraceID{0x6b, 0x75, 0x62, 0x65, 0x6c, 0x65, 0x74}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(attr.ServiceName, "kubelet")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("runtime.v1.RuntimeService/RunPodSandbox")
	sp.SetTraceID(kubeletTrace)
	sp.SetSpanID(pcommon.SpanID{1})
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+otlpAddr+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the OTLP receiver answered %d", resp.StatusCode)
	}

	// resources by kind of span: "kubelet" (the OTLP receiver's) and "lifecycle".
	resources := map[string]map[string]any{}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && len(resources) < 2; time.Sleep(100 * time.Millisecond) {
		for _, b := range xr.Batches() {
			rss := b.Traces.ResourceSpans()
			for i := range rss.Len() {
				res := rss.At(i).Resource().Attributes().AsRaw()
				for j := range rss.At(i).ScopeSpans().Len() {
					spans := rss.At(i).ScopeSpans().At(j).Spans()
					for k := range spans.Len() {
						switch s := spans.At(k); {
						case s.TraceID() == kubeletTrace:
							resources["kubelet"] = res
						case s.Name() == "Pod start":
							resources["lifecycle"] = res
						}
					}
				}
			}
		}
	}
	want := map[string]map[string]any{
		"kubelet":   {attr.K8sClusterName: "shop-cluster", attr.K8sNodeName: "node-1", attr.ServiceName: "kubelet"},
		"lifecycle": {attr.K8sClusterName: "shop-cluster", attr.K8sNodeName: "node-1", attr.ServiceName: "otelcol-k8s-node"},
	}
	for kind, w := range want {
		got, ok := resources[kind]
		if !ok {
			t.Errorf("no %s span at the X-Ray endpoint", kind)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("the %s span's resource %v, want %v", kind, got, w)
		}
	}
}
