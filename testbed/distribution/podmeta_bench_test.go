// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
)

// TestPodMetadataSideBySide (on demand: OTELCOL_K8S_BENCH_PODMETA=<lines per pod>) runs the
// shipped node configuration twice per round against one API server holding 110 Pods of 11
// Deployments on node-1 and 220 more on node-2: as shipped (pod_metadata, one Pod watch of the
// node), and with cri_log's Pod metadata replaced by the k8s_attributes processor the node
// configuration shipped before (its Pod informer of the node).
// Each run reads the same lines from the node's 110 files into a file exporter; it reports the
// collector's CPU time per record and its peak RSS (/proc), and checks that pod_metadata gave
// every record its k8s.deployment.name (k8s_attributes' records without one are counted).
func TestPodMetadataSideBySide(t *testing.T) {
	perPod, _ := strconv.Atoi(os.Getenv("OTELCOL_K8S_BENCH_PODMETA"))
	if perPod <= 0 {
		t.Skip("OTELCOL_K8S_BENCH_PODMETA (lines per pod) is not set: a benchmark, run on demand")
	}
	bin := binary(t)
	cluster := kubecluster.Start(t)
	kc := harness.KubeClient(t, cluster.Kubeconfig, 500, 1000)
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}))
	must(kc.CoreV1().ServiceAccounts("shop").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}))
	yes := true
	type pod struct{ name, uid, deployment string }
	var node1 []pod
	for d := range 11 {
		name := fmt.Sprintf("app%02d", d)
		sel := map[string]string{"app": name}
		spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}
		deploy, err := kc.AppsV1().Deployments("shop").Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
			Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: spec}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := kc.AppsV1().ReplicaSets("shop").Create(ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-7c9d", Namespace: "shop", OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: name, UID: deploy.UID, Controller: &yes},
			}},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: spec}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The label the Deployment controller adds; k8s_attributes derives the Deployment's name
		// from it and the ReplicaSet's name.
		podLabels := map[string]string{"app": name, "pod-template-hash": "7c9d"}
		for i := range 30 {
			spec.NodeName = "node-1"
			if i >= 10 {
				spec.NodeName = "node-2"
			}
			p, err := kc.CoreV1().Pods("shop").Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-7c9d-%02d", name, i), Namespace: "shop", Labels: podLabels, OwnerReferences: []metav1.OwnerReference{
					{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes},
				}},
				Spec: spec,
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if spec.NodeName == "node-1" {
				node1 = append(node1, pod{p.Name, string(p.UID), name})
			}
		}
	}

	type result struct {
		cpu               time.Duration
		hwmKB             int64
		withoutDeployment int
	}
	run := func(variant string) result {
		root, state := t.TempDir(), t.TempDir()
		out := filepath.Join(t.TempDir(), "records.jsonl")
		health := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		cfgPath, env := shippedNodeConfig(t, root, state, health, out, cluster.Kubeconfig)
		if variant == "k8s_attributes" {
			withK8sAttributes(t, cfgPath)
			env = append(env, "KUBECONFIG="+cluster.Kubeconfig)
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(cctx, bin, "--config", cfgPath)
		cmd.Env = append(os.Environ(), env...)
		var logs strings.Builder
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("collector output:\n%s", logs.String())
			}
		}()
		waitHealthy(t, health)
		clock := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
		for _, p := range node1 {
			dir := filepath.Join(root, "var/log/pods", "shop_"+p.name+"_"+p.uid, "app")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i := range perPod {
				clock = clock.Add(time.Microsecond)
				fmt.Fprintf(&b, "%s stdout F %s request %d served in 12ms status=200 path=/api/v1/items\n", clock.Format(time.RFC3339Nano), p.name, i)
			}
			if err := os.WriteFile(filepath.Join(dir, "0.log"), []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		want := perPod * len(node1)
		var n int
		for deadline := time.Now().Add(8 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			if n = countLines(out); n >= want {
				break
			}
		}
		if n < want {
			t.Fatalf("%s: %d of %d records", variant, n, want)
		}
		res := result{cpu: procCPU(t, cmd.Process.Pid), hwmKB: procHWM(t, cmd.Process.Pid)}
		for _, r := range readFullRecords(t, out) {
			if str(r.Resource["k8s.deployment.name"]) == "" {
				res.withoutDeployment++
			}
		}
		// pod_metadata must name every record's Deployment; k8s_attributes' count is reported.
		if variant == "pod_metadata" && res.withoutDeployment > 0 {
			t.Errorf("%s: %d records without k8s.deployment.name", variant, res.withoutDeployment)
		}
		return res
	}
	records := float64(perPod * len(node1))
	for round := 1; round <= 3; round++ {
		a, b := run("pod_metadata"), run("k8s_attributes")
		t.Logf("round %d, %d records: pod_metadata %.2f µs CPU/record, peak RSS %.1f MiB; k8s_attributes %.2f µs CPU/record, peak RSS %.1f MiB, %d records without k8s.deployment.name; ratio CPU %.2fx, RSS %.2fx",
			round, int(records),
			float64(a.cpu.Microseconds())/records, float64(a.hwmKB)/1024,
			float64(b.cpu.Microseconds())/records, float64(b.hwmKB)/1024, b.withoutDeployment,
			float64(a.cpu)/float64(b.cpu), float64(a.hwmKB)/float64(b.hwmKB))
	}
}

// withK8sAttributes rewrites the configuration at path as the node configuration shipped before
// pod_metadata: no pod_metadata extension, k8s_attributes (kubeconfig auth) at the end of the
// logs pipeline.
func withK8sAttributes(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	delete(cfg["extensions"].(map[string]any), "pod_metadata")
	delete(cfg["receivers"].(map[string]any)["cri_log"].(map[string]any), "pod_metadata")
	service := cfg["service"].(map[string]any)
	var exts []any
	for _, e := range service["extensions"].([]any) {
		if e != "pod_metadata" {
			exts = append(exts, e)
		}
	}
	service["extensions"] = exts
	cfg["processors"].(map[string]any)["k8s_attributes"] = map[string]any{
		"auth_type":         "kubeConfig",
		"wait_for_metadata": true,
		"filter":            map[string]any{"node_from_env_var": "K8S_NODE_NAME"},
		"pod_association":   []any{map[string]any{"sources": []any{map[string]any{"from": "resource_attribute", "name": "k8s.pod.uid"}}}},
		"extract":           map[string]any{"metadata": []any{"k8s.deployment.name", "k8s.node.name"}},
	}
	logs := service["pipelines"].(map[string]any)["logs"].(map[string]any)
	logs["processors"] = append(logs["processors"].([]any), "k8s_attributes")
	if b, err = yaml.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// countLines counts the records in the file exporter's output.
func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), `"body"`)
}

// procCPU is the process's user + system CPU time.
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
}

// procHWM is the process's peak RSS in KiB.
func procHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	t.Fatal("no VmHWM")
	return 0
}
