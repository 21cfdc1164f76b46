// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

// TestShippedNodePodMetadata runs the shipped node configuration against a real API server:
// pod_metadata watches node-1's Pods and cri_log takes its attributes and opt-outs from it.
// Pods are created while the collector runs and log at once (their file is written right after
// the Pod is created): a Deployment's Pod has k8s.deployment.name on its first line; a Pod
// annotated otelcol-k8s.io/exclude and a Pod of a namespace labeled so are never read; a Pod
// the API server does not know (a static Pod's mirror not yet there) is read after
// metadata_wait, with its path's attributes.
func TestShippedNodePodMetadata(t *testing.T) {
	bin := binary(t)
	cluster, kc := localAPIServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for ns, labels := range map[string]map[string]string{"shop": nil, "muted": {"otelcol-k8s.io/exclude": "true"}} {
		must(kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{}))
		// No controller manager runs: create the service account it would.
		must(kc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}))
	}
	yes := true
	sel := map[string]string{"app": "web"}
	podSpec := corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}
	rs, err := kc.AppsV1().ReplicaSets("shop").Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-7c9d", Namespace: "shop", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "5e0f6a1b-0000-4000-8000-000000000001", Controller: &yes},
		}},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: podSpec,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	root, state := t.TempDir(), t.TempDir()
	out := filepath.Join(t.TempDir(), "records.jsonl")
	health := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg, env := shippedNodeConfig(t, root, state, health, out, cluster.Kubeconfig)
	startCollector(t, bin, cfg, env, health)

	// createPod creates a Pod on node-1 and returns its uid; logAtOnce then writes the first
	// lines of its container right away, as a container that logs at start does.
	createPod := func(ns, name string, annotations map[string]string, owners []metav1.OwnerReference) k8stypes.UID {
		t.Helper()
		p, err := kc.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: sel, Annotations: annotations, OwnerReferences: owners},
			Spec:       podSpec,
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.UID
	}
	clock := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	logAtOnce := func(ns, name string, uid k8stypes.UID, lines ...string) {
		t.Helper()
		dir := filepath.Join(root, "var/log/pods", ns+"_"+name+"_"+string(uid), "app")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, l := range lines {
			clock = clock.Add(time.Millisecond)
			fmt.Fprintf(&b, "%s stdout F %s\n", clock.Format(time.RFC3339Nano), l)
		}
		if err := os.WriteFile(filepath.Join(dir, "0.log"), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logAtOnce("shop", "secret-0", createPod("shop", "secret-0", map[string]string{"otelcol-k8s.io/exclude": "true"}, nil), "secret line 1", "secret line 2")
	logAtOnce("muted", "muted-0", createPod("muted", "muted-0", nil, nil), "muted line 1")
	logAtOnce("shop", "web-7c9d-x1", createPod("shop", "web-7c9d-x1", nil, []metav1.OwnerReference{
		{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes},
	}), "web first line", "web second line")
	// Never created in the API server.
	logAtOnce("shop", "ghost", "9d3c2b1a-0000-4000-8000-00000000beef", "ghost line")

	var recs []fullRecord
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if recs = readFullRecords(t, out); len(recs) >= 3 {
			break
		}
	}
	got := map[string]fullRecord{}
	for _, r := range recs {
		got[r.Body] = r
	}
	if len(recs) != 3 {
		for _, r := range recs {
			t.Logf("record: %q", r.Body)
		}
		t.Fatalf("got %d records, want 3 (web's two and ghost's)", len(recs))
	}
	for _, body := range []string{"web first line", "web second line"} {
		r, ok := got[body]
		if !ok {
			t.Fatalf("%q not exported", body)
		}
		for k, want := range map[string]string{
			"k8s.deployment.name": "web", "k8s.node.name": "node-1", "k8s.pod.name": "web-7c9d-x1", "k8s.namespace.name": "shop",
		} {
			if v := str(r.Resource[k]); v != want {
				t.Errorf("%q: %s = %q, want %q", body, k, v, want)
			}
		}
	}
	ghost, ok := got["ghost line"]
	if !ok {
		t.Fatal("the unknown Pod's line was not exported after metadata_wait")
	}
	if _, has := ghost.Resource["k8s.deployment.name"]; has || str(ghost.Resource["k8s.pod.name"]) != "ghost" {
		t.Errorf("unknown Pod's resource: %v", ghost.Resource)
	}
	// The opted-out Pods' files were written before ghost's, which waited metadata_wait:
	// had they been read, their lines would be here.
	for body := range got {
		if strings.HasPrefix(body, "secret") || strings.HasPrefix(body, "muted") {
			t.Errorf("an opted-out Pod's line was exported: %q", body)
		}
	}
}
