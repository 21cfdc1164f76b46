// SPDX-License-Identifier: Apache-2.0

// Command pause is the sandbox image's only program: the first process of every Pod sandbox on
// the test node. It holds the sandbox's namespaces until it is told to stop, reaps the children
// that are re-parented to it, and exits 0 on SIGTERM or SIGINT. It is a static Go binary so that
// the node needs no registry: testbed/kubenode builds it into an image and imports it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
