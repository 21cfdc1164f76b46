// SPDX-License-Identifier: Apache-2.0

// Package image assembles the otelcol-k8s container image without a container daemon: one
// layer (the static binary and a CA bundle) on an empty base per architecture, an OCI image
// index over them, written as an OCI layout and as one `docker load` tarball per architecture.
package image

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// Paths and identity inside the image.
const (
	Binary = "/otelcol-k8s"
	// NodeBinary is the node agent's build (builder-config-node.yaml), the DaemonSet's command.
	NodeBinary = "/otelcol-k8s-node"
	CAFile     = "/etc/ssl/certs/ca-certificates.crt"
	User       = "10001:10001"
)

// Cmd is the image's default arguments: the configuration the manifests mount.
var Cmd = []string{"--config=/etc/otelcol-k8s/config.yaml"}

// Options describe the image.
type Options struct {
	// Binaries maps an architecture (amd64, arm64) to the path of its static linux binary.
	Binaries map[string]string
	// NodeBinaries maps an architecture to the path of its node agent build; every
	// architecture of Binaries needs one.
	NodeBinaries map[string]string
	// Labels are the OCI annotations of the image config (org.opencontainers.image.*).
	Labels map[string]string
	// Created is the creation time written into the configs and the file times of the layer
	// (a fixed time makes the build reproducible).
	Created time.Time
}

// CABundle returns the PEM bundle of the NSS root certificates that carry no extra constraint
// (roots with a distrust-after date cannot be expressed in a PEM file and are left out).
func CABundle() []byte {
	var b bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
	}
	return b.Bytes()
}

// Build returns the image of each architecture and the index over them.
func Build(o Options) (v1.ImageIndex, map[string]v1.Image, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	images := map[string]v1.Image{}
	ca := CABundle()
	for _, arch := range sortedKeys(o.Binaries) {
		bin, err := os.ReadFile(o.Binaries[arch])
		if err != nil {
			return nil, nil, err
		}
		nodeBin, err := os.ReadFile(o.NodeBinaries[arch])
		if err != nil {
			return nil, nil, fmt.Errorf("the node agent build for %s: %w", arch, err)
		}
		img, err := archImage(arch, bin, nodeBin, ca, o)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", arch, err)
		}
		images[arch] = img
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
		})
	}
	return idx, images, nil
}

func archImage(arch string, bin, nodeBin, ca []byte, o Options) (v1.Image, error) {
	layerTar, err := files(o.Created, []file{
		{name: "etc/", dir: true},
		{name: "etc/ssl/", dir: true},
		{name: "etc/ssl/certs/", dir: true},
		{name: CAFile[1:], mode: 0o644, data: ca},
		{name: Binary[1:], mode: 0o755, data: bin},
		{name: NodeBinary[1:], mode: 0o755, data: nodeBin},
	})
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: o.Created}, CreatedBy: "otelcol-k8s make image", Comment: "binaries and CA roots",
	}}); err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", arch, v1.Time{Time: o.Created}
	cf.Config.Entrypoint = []string{Binary}
	cf.Config.Cmd = Cmd
	cf.Config.User = User
	cf.Config.Labels = o.Labels
	cf.Config.Env = []string{"SSL_CERT_FILE=" + CAFile}
	return mutate.ConfigFile(img, cf)
}

type file struct {
	name string
	dir  bool
	mode int64
	data []byte
}

// files returns a tar stream of fs owned by root, with fixed times.
func files(mtime time.Time, fs []file) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range fs {
		h := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Write writes the index as an OCI layout in dir/oci and one `docker load` tarball per
// architecture, dir/otelcol-k8s-<arch>.tar, tagged ref.
func Write(dir, ref string, idx v1.ImageIndex, images map[string]v1.Image) error {
	oci := filepath.Join(dir, "oci")
	if err := os.RemoveAll(oci); err != nil {
		return err
	}
	p, err := layout.Write(oci, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
		return err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	for arch, img := range images {
		if err := tarball.WriteToFile(filepath.Join(dir, "otelcol-k8s-"+arch+".tar"), tag, img); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}
