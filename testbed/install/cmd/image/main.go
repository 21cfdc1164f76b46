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
	ref := flag.String("ref", "otelcol-k8s:0.1.0", "name and tag of the image")
	version := flag.String("version", "0.1.0", "org.opencontainers.image.version")
	revision := flag.String("revision", "unknown", "org.opencontainers.image.revision (the commit)")
	source := flag.String("source", "https://github.com/otelcol-k8s/otelcol-k8s", "org.opencontainers.image.source")
	flag.Parse()
	if err := run(*out, *bins, *ref, *version, *revision, *source); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(out, bins, ref, version, revision, source string) error {
	o := image.Options{Binaries: map[string]string{}, Labels: map[string]string{
		"org.opencontainers.image.title":    "otelcol-k8s",
		"org.opencontainers.image.source":   source,
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": revision,
		"org.opencontainers.image.licenses": "Apache-2.0",
	}}
	for _, kv := range strings.Split(bins, ",") {
		arch, path, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("-bins: %q is not arch=path", kv)
		}
		o.Binaries[arch] = path
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
