// SPDX-License-Identifier: Apache-2.0

package nsuid

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
)

// TestWatcherAgainstAPIServer runs the watcher against a real kube-apiserver and etcd
// (testbed/kubecluster), through the same Client the exporter builds from a kubeconfig. The
// namespaces are created and deleted with client-go's typed client; the UIDs are the ones the
// server assigned.
func TestWatcherAgainstAPIServer(t *testing.T) {
	cluster := kubecluster.Start(t)
	ctx := context.Background()
	restCfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	core, err := corev1client.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]string{} // what the server assigned, by namespace name
	for _, name := range []string{"shop", "billing"} {
		uids[name] = createNamespace(t, core, name)
	}
	for _, name := range []string{"default", "kube-system"} { // created by the apiserver itself
		ns, err := core.Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids[name] = string(ns.UID)
	}

	client, err := Client(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Start(ctx, client, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// The first list: Start returns only once it is complete, so no waiting here.
	for _, name := range []string{"shop", "billing", "default", "kube-system"} {
		if uid, ok := w.UID(name); !ok || uid != uids[name] {
			t.Errorf("UID(%s) = %q, %v; the server assigned %q", name, uid, ok, uids[name])
		}
	}
	if uid, ok := w.UID("never-created"); ok {
		t.Errorf("UID(never-created) = %q, want not found", uid)
	}

	// Each step runs in order and builds on the previous ones.
	steps := []struct {
		name string
		do   func(t *testing.T)
	}{
		{"created after start appears", func(t *testing.T) {
			uid := createNamespace(t, core, "late")
			waitUID(t, w, "late", uid)
		}},
		{"terminating namespace keeps its UID", func(t *testing.T) {
			// Deletion only marks the namespace Terminating: the "kubernetes" finalizer stays
			// until the namespace controller (not running here) has emptied it. Its logs may
			// still arrive meanwhile, and the watcher keeps mapping them to the UID.
			if err := core.Namespaces().Delete(ctx, "shop", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			ns, err := core.Namespaces().Get(ctx, "shop", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
				t.Fatalf("after delete: phase %q, deletionTimestamp %v; want Terminating", ns.Status.Phase, ns.DeletionTimestamp)
			}
			// A watch delivers events in order: once a namespace created after the delete
			// is known, the watcher has processed the Terminating update, so the check below
			// is about the state after the delete, not the one before it.
			waitUID(t, w, "after-delete", createNamespace(t, core, "after-delete"))
			if uid, ok := w.UID("shop"); !ok || uid != uids["shop"] {
				t.Fatalf("UID(shop) while terminating = %q, %v; want %q", uid, ok, uids["shop"])
			}
		}},
		{"deleted namespace disappears", func(t *testing.T) {
			// Do what the namespace controller does at the end: drop the finalizer, delete again.
			finishDeletion(t, core, "shop")
			waitUID(t, w, "shop", "")
		}},
		{"re-created namespace has the new UID", func(t *testing.T) {
			uid := createNamespace(t, core, "shop")
			if uid == uids["shop"] {
				t.Fatalf("the server gave the re-created namespace its old UID %s", uid)
			}
			waitUID(t, w, "shop", uid)
		}},
		{"other namespaces unchanged", func(t *testing.T) {
			for _, name := range []string{"billing", "default", "kube-system"} {
				if uid, ok := w.UID(name); !ok || uid != uids[name] {
					t.Errorf("UID(%s) = %q, %v; want %q", name, uid, ok, uids[name])
				}
			}
		}},
	}
	for _, step := range steps {
		if !t.Run(step.name, step.do) {
			return
		}
	}
}

// createNamespace creates a namespace and returns the UID the server gave it.
func createNamespace(t *testing.T, core corev1client.CoreV1Interface, name string) string {
	t.Helper()
	ns, err := core.Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.UID == "" {
		t.Fatalf("namespace %s created without a UID", name)
	}
	return string(ns.UID)
}

// finishDeletion removes the "kubernetes" finalizer of a terminating namespace through the
// finalize subresource, deletes it again and waits until the server no longer has it.
func finishDeletion(t *testing.T, core corev1client.CoreV1Interface, name string) {
	t.Helper()
	ctx := context.Background()
	ns, err := core.Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Spec.Finalizers = nil
	if _, err := core.Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := core.Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	eventually(t, "namespace "+name+" gone from the server", func() bool {
		_, err := core.Namespaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// waitUID waits until the watcher maps name to want; want "" means not mapped at all.
func waitUID(t *testing.T, w *Watcher, name, want string) {
	t.Helper()
	eventually(t, "UID("+name+") = "+want, func() bool {
		uid, ok := w.UID(name)
		return uid == want && ok == (want != "")
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
