// SPDX-License-Identifier: Apache-2.0

package kubenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Registry is an image registry (go-containerregistry's in-memory one) on a loopback port,
// spoken to over plain HTTP, that the node's containerd pulls from once UseRegistry named its
// host. A blob's downloads can be held (HoldBlob), as a slow registry or network would: the
// response's headers go out at once, its body only when the hold ends.
type Registry struct {
	// Host is the registry's "127.0.0.1:PORT", the first part of its images' references.
	Host string

	srv *http.Server
	ln  net.Listener

	mu    sync.Mutex
	holds map[string]*hold // by digest ("sha256:...")
}

// hold is a held blob: its bytes, until when its downloads wait, and when they were asked for.
type hold struct {
	data      []byte
	until     time.Time // zero: from the first request on, for wait
	wait      time.Duration
	requested []time.Time
	served    []time.Time
}

// StartRegistry starts a registry on a free loopback port.
func StartRegistry() (*Registry, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Registry{Host: ln.Addr().String(), ln: ln, holds: map[string]*hold{}}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.serve(w, req, inner) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// serve answers a held blob's GET itself (headers at once, the body at the end of the hold)
// and passes everything else to the registry.
func (r *Registry) serve(w http.ResponseWriter, req *http.Request, inner http.Handler) {
	i := strings.LastIndex(req.URL.Path, "/blobs/")
	if req.Method != http.MethodGet || i < 0 {
		inner.ServeHTTP(w, req)
		return
	}
	digest := req.URL.Path[i+len("/blobs/"):]
	r.mu.Lock()
	h := r.holds[digest]
	var until time.Time
	if h != nil {
		h.requested = append(h.requested, time.Now())
		if h.until.IsZero() {
			h.until = time.Now().Add(h.wait)
		}
		until = h.until
	}
	r.mu.Unlock()
	if h == nil {
		inner.ServeHTTP(w, req)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(h.data)))
	w.Header().Set("Docker-Content-Digest", digest)
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-t.C:
	case <-req.Context().Done():
		return // the client gave up; its retry waits for the same end
	}
	if _, err := w.Write(h.data); err != nil {
		return
	}
	r.mu.Lock()
	h.served = append(h.served, time.Now())
	r.mu.Unlock()
}

// Push uploads the image of a docker-archive tarball (ImportImage's kind, one image) as
// Host/repo:tag, with one more layer holding extra (path relative to the root -> content)
// when set, and returns that reference and the image's layers' digests, in order. A node that
// imported the tarball holds its layers already and pulls only the extra one.
func (r *Registry) Push(ctx context.Context, tarballPath, repo, tag string, extra map[string][]byte) (string, []v1.Hash, error) {
	img, err := tarball.ImageFromPath(tarballPath, nil)
	if err != nil {
		return "", nil, err
	}
	if len(extra) > 0 {
		layer, err := layerOf(extra)
		if err != nil {
			return "", nil, err
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			return "", nil, err
		}
	}
	ref := r.Host + "/" + repo + ":" + tag
	dst, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		return "", nil, err
	}
	if err := remote.Write(dst, img, remote.WithContext(ctx)); err != nil {
		return "", nil, fmt.Errorf("kubenode: push %s: %w", ref, err)
	}
	layers, err := img.Layers()
	if err != nil {
		return "", nil, err
	}
	var digests []v1.Hash
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return "", nil, err
		}
		digests = append(digests, d)
	}
	return ref, digests, nil
}

// HoldBlob holds the downloads of a pushed blob: every GET of it gets its headers at once and
// its body wait after the first GET (a retry waits for the same moment).
func (r *Registry) HoldBlob(ctx context.Context, repo string, digest v1.Hash, wait time.Duration) error {
	ref, err := name.NewDigest(r.Host+"/"+repo+"@"+digest.String(), name.Insecure)
	if err != nil {
		return err
	}
	layer, err := remote.Layer(ref, remote.WithContext(ctx))
	if err != nil {
		return err
	}
	rc, err := layer.Compressed()
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }() // read-only
	data, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.holds[digest.String()] = &hold{data: data, wait: wait}
	return nil
}

// Downloads returns when a held blob was asked for and when its body went out.
func (r *Registry) Downloads(digest v1.Hash) (requested, served []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.holds[digest.String()]
	if h == nil {
		return nil, nil
	}
	return append([]time.Time(nil), h.requested...), append([]time.Time(nil), h.served...)
}

// Close stops the registry; held downloads end without their body.
func (r *Registry) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return r.srv.Close()
	}
	return err
}

// UseRegistry makes the node's containerd pull the images of host ("127.0.0.1:PORT") from it
// over plain HTTP: a hosts.toml in the registry hosts folder of containerd's configuration
// (config_path), which containerd reads at every pull.
func (n *Node) UseRegistry(host string) error {
	dir := filepath.Join(n.registryHostsDir(), host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	toml := fmt.Sprintf("server = %[1]q\n\n[host.%[1]q]\n  capabilities = [\"pull\", \"resolve\"]\n", "http://"+host)
	return os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(toml), 0o644)
}

// registryHostsDir is containerd's registry config_path, one folder per registry host.
func (n *Node) registryHostsDir() string { return filepath.Join(n.dir, "containerd", "certs.d") }
