// SPDX-License-Identifier: Apache-2.0

package kubenode

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestRegistryHoldsABlob: an image pushed from a docker tarball is pulled back whole; its held
// layer's headers come at once and its body only after the hold, and a second download waits
// for the same end, not a hold of its own.
func TestRegistryHoldsABlob(t *testing.T) {
	r, err := StartRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	tar := filepath.Join(t.TempDir(), "img.tar")
	if err := WriteImage("localhost/held/app:1", tar, map[string][]byte{"app": []byte("#!/bin/true\n")}, []string{"/app"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ref, layers, err := r.Push(ctx, tar, "held/app", "1", map[string][]byte{"extra": []byte("this run's own layer")})
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 {
		t.Fatalf("layers %v, want the tarball's and the extra one", layers)
	}
	const wait = 600 * time.Millisecond
	if err := r.HoldBlob(ctx, "held/app", layers[1], wait); err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	l, err := img.LayerByDigest(layers[1])
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	read := func() time.Duration {
		rc, err := l.Compressed()
		if err != nil {
			t.Error(err)
			return 0
		}
		defer func() { _ = rc.Close() }()
		if _, err := io.ReadAll(rc); err != nil {
			t.Error(err)
		}
		return time.Since(began)
	}
	done := make(chan time.Duration)
	go func() { done <- read() }()
	first := <-done
	second := read() // after the hold ended: at once
	if first < wait || first > wait+2*time.Second {
		t.Errorf("the held layer arrived after %v, want about %v", first, wait)
	}
	if second-first > time.Second {
		t.Errorf("a second download took another %v", second-first)
	}
	requested, served := r.Downloads(layers[1])
	if len(requested) != 2 || len(served) != 2 {
		t.Errorf("downloads asked %v, served %v: want two of each", requested, served)
	}
}
