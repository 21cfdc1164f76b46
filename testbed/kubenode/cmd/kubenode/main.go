// SPDX-License-Identifier: Apache-2.0

// Command kubenode starts the testbed's real one-node cluster (package kubenode) for a person to
// look at: it prints the kubeconfig's path and the API server's address, waits for Ctrl-C (or
// SIGTERM), stops the node and reports whether the host was left as it was found. `make
// kubenode` builds what it needs and runs it; it needs root.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/kubenode"
)

func main() {
	var cfg kubenode.Config
	flag.StringVar(&cfg.KubeLocalBin, "kube-bin", "bin/kube-local", "etcd and kube-apiserver (make kube-bin)")
	flag.StringVar(&cfg.NodeBin, "node-bin", "bin/kube-node", "kubelet, kube-scheduler and kube-controller-manager (make kube-node-bin)")
	flag.StringVar(&cfg.ModuleDir, "module-dir", "testbed/kubenode", "the kubenode module's folder (the pause image is built from it)")
	flag.BoolVar(&cfg.KeepDir, "keep", false, "keep the scratch folder (the programs' logs) after stopping")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	node, err := kubenode.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1) //nolint:gocritic // the signal context needs no cleanup when the process exits
	}
	fmt.Printf("node %s is Ready\n  kubeconfig: %s\n  API server: https://%s:%d\n  logs: %s/logs\n  images: ctr --address %s -n k8s.io images import IMAGE.tar\nCtrl-C stops it.\n",
		kubenode.NodeName, node.Kubeconfig, node.APIHost, node.APIPort, node.Dir(), node.ContainerdAddress())
	<-ctx.Done()
	fmt.Println("stopping")
	if err := node.Stop(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("stopped; the host is as it was")
}
