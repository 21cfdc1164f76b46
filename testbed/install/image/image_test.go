// SPDX-License-Identifier: Apache-2.0

package image

import (
	"archive/tar"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/install/internal/testenv"
)

func TestCABundle(t *testing.T) {
	rest := CABundle()
	n := 0
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		_, err := x509.ParseCertificate(b.Bytes)
		require.NoError(t, err)
		n++
	}
	assert.Empty(t, rest)
	assert.Greater(t, n, 100, "the NSS roots")
}

// TestBuildAndWrite builds an image from two small stand-in binaries and reads back both
// outputs: the OCI layout (index, platforms, config) and the docker tarballs.
func TestBuildAndWrite(t *testing.T) {
	dir := t.TempDir()
	bins, nodeBins := map[string]string{}, map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(dir, arch)
		require.NoError(t, os.WriteFile(p, []byte("binary for "+arch), 0o600))
		bins[arch] = p
		p = filepath.Join(dir, "node-"+arch)
		require.NoError(t, os.WriteFile(p, []byte("node binary for "+arch), 0o600))
		nodeBins[arch] = p
	}
	labels := map[string]string{"org.opencontainers.image.revision": "abc123"}
	idx, images, err := Build(Options{Binaries: bins, NodeBinaries: nodeBins, Labels: labels, Created: time.Unix(1700000000, 0)})
	require.NoError(t, err)
	out := filepath.Join(dir, "out")
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, Write(out, "otelcol-k8s:test", idx, images))

	got := checkLayout(t, filepath.Join(out, "oci"), labels)
	for arch, img := range got {
		assert.Equal(t, []byte("binary for "+arch), fileOf(t, img, Binary))
		assert.Equal(t, []byte("node binary for "+arch), fileOf(t, img, NodeBinary))
		// The DaemonSet runs as uid 0 without capabilities: idle_gc's release of the binary's
		// pages needs the process to own the file (the root filesystem is read-only).
		assert.Zero(t, headerOf(t, img, NodeBinary).Uid, "owner of %s", NodeBinary)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		tag, err := name.NewTag("otelcol-k8s:test")
		require.NoError(t, err)
		img, err := tarball.ImageFromPath(filepath.Join(out, "otelcol-k8s-"+arch+".tar"), &tag)
		require.NoError(t, err)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		assert.Equal(t, arch, cf.Architecture)
	}
}

// TestBuiltImage opens the image `make image` wrote (OTELCOL_K8S_IMAGE names its OCI layout),
// checks it and runs the amd64 binary's `components`.
func TestBuiltImage(t *testing.T) {
	dir := testenv.Path(t, "OTELCOL_K8S_IMAGE", "`make test-image` builds the image and runs this test")
	images := checkLayout(t, dir, map[string]string{})
	cf, err := images["amd64"].ConfigFile()
	require.NoError(t, err)
	for _, k := range []string{"source", "version", "revision"} {
		assert.NotEmpty(t, cf.Config.Labels["org.opencontainers.image."+k], k)
	}
	bin := filepath.Join(t.TempDir(), "otelcol-k8s")
	require.NoError(t, os.WriteFile(bin, fileOf(t, images["amd64"], Binary), 0o700))
	out, err := exec.Command(bin, "components").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, c := range []string{"cri_log", "klog_parser", "object_ref", "cloudwatch_groups", "kube_events"} {
		assert.Contains(t, string(out), c)
	}
	// The node agent's build: the DaemonSet's components, without the cluster-wide ones.
	node := filepath.Join(t.TempDir(), "otelcol-k8s-node")
	require.NoError(t, os.WriteFile(node, fileOf(t, images["amd64"], NodeBinary), 0o700))
	out, err = exec.Command(node, "components").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, c := range []string{"cri_log", "klog_parser", "object_ref", "cloudwatch_groups", "trace_context", "kube_lifecycle"} {
		assert.Contains(t, string(out), c)
	}
	assert.NotContains(t, string(out), "kube_events")
	for _, p := range []string{Binary, NodeBinary} {
		arm := fileOf(t, images["arm64"], p)
		assert.Equal(t, []byte{0x7f, 'E', 'L', 'F'}, arm[:4], p)
		assert.Equal(t, byte(0xb7), arm[18], "%s: e_machine is AArch64", p)
	}
}

// checkLayout checks an OCI layout: one index with linux/amd64 and linux/arm64 images whose
// configs carry the entrypoint, user and labels; it returns the images by architecture.
func checkLayout(t *testing.T, dir string, labels map[string]string) map[string]v1.Image {
	t.Helper()
	p, err := layout.FromPath(dir)
	require.NoError(t, err)
	top, err := p.ImageIndex()
	require.NoError(t, err)
	tm, err := top.IndexManifest()
	require.NoError(t, err)
	require.Len(t, tm.Manifests, 1)
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	images := map[string]v1.Image{}
	var archs []string
	for _, d := range im.Manifests {
		require.NotNil(t, d.Platform)
		assert.Equal(t, "linux", d.Platform.OS)
		archs = append(archs, d.Platform.Architecture)
		img, err := idx.Image(d.Digest)
		require.NoError(t, err)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		assert.Equal(t, d.Platform.Architecture, cf.Architecture)
		assert.Equal(t, []string{Binary}, cf.Config.Entrypoint)
		assert.Equal(t, Cmd, cf.Config.Cmd)
		assert.Equal(t, User, cf.Config.User, "not root unless the pod says so")
		for k, v := range labels {
			assert.Equal(t, v, cf.Config.Labels[k])
		}
		ca := fileOf(t, img, CAFile)
		b, _ := pem.Decode(ca)
		require.NotNil(t, b, "CA bundle at %s", CAFile)
		images[d.Platform.Architecture] = img
	}
	slices.Sort(archs)
	assert.Equal(t, []string{"amd64", "arm64"}, archs)
	return images
}

// fileOf returns the content of path in img's flattened filesystem.
func fileOf(t *testing.T, img v1.Image, path string) []byte {
	t.Helper()
	_, b := entryOf(t, img, path)
	return b
}

// headerOf returns the tar header of path in img's flattened filesystem.
func headerOf(t *testing.T, img v1.Image, path string) *tar.Header {
	t.Helper()
	h, _ := entryOf(t, img, path)
	return h
}

func entryOf(t *testing.T, img v1.Image, path string) (*tar.Header, []byte) {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s not in the image", path)
		}
		require.NoError(t, err)
		if "/"+strings.TrimPrefix(h.Name, "/") == path {
			b, err := io.ReadAll(tr)
			require.NoError(t, err)
			return h, b
		}
	}
}
