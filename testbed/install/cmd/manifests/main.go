// SPDX-License-Identifier: Apache-2.0

// Command manifests renders the Helm chart of deploy/helm/otelcol-k8s into the plain manifests
// of deploy/kubernetes (`make manifests`).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/install"
)

func main() {
	root := flag.String("root", "../..", "repository root")
	check := flag.Bool("check", false, "only report the files that differ from the chart's rendering")
	flag.Parse()
	if *check {
		files, err := install.Manifests(*root)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		drift, err := install.Drift(*root, files)
		if err != nil || len(drift) > 0 {
			fmt.Fprintln(os.Stderr, "deploy/kubernetes differs from the chart's rendering (run make manifests):", drift, err)
			os.Exit(1)
		}
		return
	}
	if err := install.Write(*root); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
