// SPDX-License-Identifier: Apache-2.0

// Command image writes the otelcol-k8s container image (`make image`) from static linux
// binaries: an OCI layout (push it with `crane push --index <dir>/oci <repository>:<tag>`) and
// one `docker load` tarball per architecture.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/install/image"
)

func main() {
	out := flag.String("out", "bin/image", "output folder")
	bins := flag.String("bins", "", "comma-separated arch=path of the static linux binaries")
	nodeBins := flag.String("node-bins", "", "comma-separated arch=path of the node agent's static linux binaries")
	ref := flag.String("ref", "otelcol-k8s:0.1.0", "name and tag of the image")
	version := flag.String("version", "0.1.0", "org.opencontainers.image.version")
	revision := flag.String("revision", "unknown", "org.opencontainers.image.revision (the commit)")
	source := flag.String("source", "https://github.com/otelcol-k8s/otelcol-k8s", "org.opencontainers.image.source")
	flag.Parse()
	if err := run(*out, *bins, *nodeBins, *ref, *version, *revision, *source); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(out, bins, nodeBins, ref, version, revision, source string) error {
	o := image.Options{Binaries: map[string]string{}, NodeBinaries: map[string]string{}, Labels: map[string]string{
		"org.opencontainers.image.title":    "otelcol-k8s",
		"org.opencontainers.image.source":   source,
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": revision,
		"org.opencontainers.image.licenses": "Apache-2.0",
	}}
	if err := archPaths("-bins", bins, o.Binaries); err != nil {
		return err
	}
	if err := archPaths("-node-bins", nodeBins, o.NodeBinaries); err != nil {
		return err
	}
	// SOURCE_DATE_EPOCH (the commit time) makes the image reproducible.
	o.Created = time.Unix(0, 0).UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH: %w", err)
		}
		o.Created = time.Unix(sec, 0).UTC()
	}
	idx, images, err := image.Build(o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return image.Write(out, ref, idx, images)
}

// archPaths reads a flag's comma-separated arch=path pairs into m.
func archPaths(name, list string, m map[string]string) error {
	for _, kv := range strings.Split(list, ",") {
		arch, path, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("%s: %q is not arch=path", name, kv)
		}
		m[arch] = path
	}
	return nil
}
