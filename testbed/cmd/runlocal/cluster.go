// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// clusterStart is the cluster part on its way: bin/kube-local and bin/otelcol-k8s brought up to
// date, then the local API server, the events collector and the traced Pods started
// (events.go, traced.go).
type clusterStart struct {
	build  *kubeBuild         // nil: no build command, or it could not start
	result chan clusterResult // one value; nil once the run has taken it
}

type clusterResult struct {
	ev  *eventsRun // nil with a nil err: no cluster part (no -kube-bin)
	err error
}

// startCluster starts the cluster part in the background. The node part does not wait for
// it: a first `make run` shows the node's logs while the API server compiles.
func startCluster(ctx context.Context, kubeBin, buildCmd, eventsBin, nodeBin, dir string) *clusterStart {
	cl := &clusterStart{result: make(chan clusterResult, 1)}
	if kubeBin == "" {
		cl.result <- clusterResult{}
		return cl
	}
	if buildCmd != "" {
		b, err := startKubeBuild(ctx, []string{kubeBin, eventsBin}, buildCmd, filepath.Join(dir, "cluster-build.log"))
		if err != nil {
			cl.result <- clusterResult{err: fmt.Errorf("building %s: %w", kubeBin, err)}
			return cl
		}
		cl.build = b
		fmt.Println(b.describe())
		fmt.Println("the node part runs meanwhile; the cluster part (Events, traced Pods) starts when they are built")
	}
	go func() {
		if cl.build != nil {
			if err := <-cl.build.done; err != nil {
				cl.result <- clusterResult{err: err}
				return
			}
		}
		for _, b := range []string{kubeBin, eventsBin} {
			if _, err := os.Stat(b); err != nil {
				cl.result <- clusterResult{err: fmt.Errorf("%w; `make build-only kube-bin` builds what the cluster part runs", err)}
				return
			}
		}
		ev, err := startEvents(ctx, kubeBin, eventsBin, nodeBin, dir)
		cl.result <- clusterResult{ev: ev, err: err}
	}()
	return cl
}

// waiting says what the cluster part is waiting for ("" when it is not waiting for a build).
func (cl *clusterStart) waiting() string {
	if cl.result == nil || cl.build == nil || !cl.build.running.Load() {
		return ""
	}
	s := fmt.Sprintf("waiting for %s to build (%s so far", cl.build.names(), time.Since(cl.build.started).Round(time.Second))
	if cl.build.last.took > 0 {
		s += fmt.Sprintf(", %s last time", cl.build.last.took)
	}
	return s + "; log: " + cl.build.logPath + ")"
}
