// SPDX-License-Identifier: Apache-2.0

package nsuid

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata/fake"
)

func namespace(name, uid string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid)},
	}
}

// TestWatcher uses client-go's metadata fake: list, then a delete and a re-create with a new
// UID seen through the watch.
func TestWatcher(t *testing.T) {
	scheme := fake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	client := fake.NewSimpleMetadataClient(scheme, namespace("shop", "uid-1"), namespace("billing", "uid-2"))
	w, err := Start(context.Background(), client, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if uid, ok := w.UID("shop"); !ok || uid != "uid-1" {
		t.Fatalf("UID(shop) = %q, %v", uid, ok)
	}
	if _, ok := w.UID("missing"); ok {
		t.Fatal("UID(missing) found")
	}
	res := client.Resource(namespaces)
	if err := res.Delete(context.Background(), "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := res.(interface {
		CreateFake(*metav1.PartialObjectMetadata, metav1.CreateOptions, ...string) (*metav1.PartialObjectMetadata, error)
	}).CreateFake(namespace("shop", "uid-3"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if uid, _ := w.UID("shop"); uid == "uid-3" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("re-created namespace not seen")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
