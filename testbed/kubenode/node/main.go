// SPDX-License-Identifier: Apache-2.0

// Command node holds the three node-side programs of a Kubernetes cluster in one binary, each
// compiled from k8s.io/kubernetes: the kubelet, the scheduler and the controller manager. The
// program to run is chosen like hyperkube chose it: by the name the binary is called with
// (a symlink named kubelet, kube-scheduler or kube-controller-manager), or else by the first
// argument:
//
//	kube-node kubelet --config=...
//	kube-node kube-scheduler --kubeconfig=... --secure-port=0
//	kube-node kube-controller-manager --kubeconfig=...
//
// One binary instead of three shares the packages the three have in common (about 104 MiB
// instead of 241 MiB) and is one build in the cache. testbed/kubenode starts it.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	_ "time/tzdata" // the controller manager's CronJob time zones

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // the version metric
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

// programs maps a program name to the constructor of its command.
var programs = map[string]func() *cobra.Command{
	"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kube-controller-manager": func() *cobra.Command { return controllermanager.NewControllerManagerCommand() },
}

func main() {
	name := filepath.Base(os.Args[0])
	newCommand, ok := programs[name]
	if !ok && len(os.Args) > 1 {
		if newCommand, ok = programs[os.Args[1]]; ok {
			// The program reads its flags from os.Args[1:]; drop the program name.
			os.Args = append([]string{os.Args[1]}, os.Args[2:]...)
		}
	}
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: kube-node {kubelet|kube-scheduler|kube-controller-manager} [flags]")
		os.Exit(2)
	}
	os.Exit(cli.Run(newCommand()))
}
