// SPDX-License-Identifier: Apache-2.0

package kubenode

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// PauseImage is the sandbox image of the node's containerd, built by Start from cmd/pause.
const PauseImage = "localhost/kubenode/pause:1"

// LoggenImage is the logging workload's image (cmd/loggen), built by BuildGoImage on demand.
const LoggenImage = "localhost/kubenode/loggen:1"

// BuildGoImage compiles the main package pkg of this module (for example
// "./cmd/loggen", relative to the module's folder moduleDir) as a static linux/amd64 binary
// and writes a one-layer image holding only that binary as /<base name of pkg>, its entry point,
// to a docker-archive tarball at out, tagged ref. `ctr images import` reads it.
func BuildGoImage(ctx context.Context, moduleDir, pkg, ref, out string) error {
	prog := filepath.Base(pkg)
	bin := filepath.Join(filepath.Dir(out), prog+".bin")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg) //nolint:gosec // the testbed builds its own packages
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	defer func() { _ = os.Remove(bin) }()
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	return WriteImage(ref, out, map[string][]byte{prog: data}, []string{"/" + prog})
}

// WriteImage writes an image for linux/amd64 with one layer holding files (path relative to
// the root, mode 0755) and the given entry point, as a docker-archive tarball tagged ref.
func WriteImage(ref, out string, files map[string][]byte, entrypoint []string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	layer, err := layerOf(files)
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config = v1.Config{Entrypoint: entrypoint}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	return tarball.WriteToFile(out, tag, img)
}

// layerOf is a layer holding files (path relative to the root, mode 0755), built in memory.
func layerOf(files map[string][]byte) (v1.Layer, error) {
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	epoch := time.Unix(0, 0)
	for _, path := range slices.Sorted(maps.Keys(files)) {
		data := files[path]
		if err := tw.WriteHeader(&tar.Header{Name: path, Mode: 0o755, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return tarball.LayerFromReader(bytes.NewReader(layerTar.Bytes())) //nolint:staticcheck // the layer is small and built in memory
}
