// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// clusterStart is the cluster part on its way: bin/kube-local, bin/otelcol-k8s and the cluster
// program (testbed/cmd/runlocal/cluster) brought up to date, then that program started: it runs
// the local API server, the events collector and the traced Pods, and prints its own reports.
type clusterStart struct {
	build  *kubeBuild         // nil: no build command, or it could not start
	result chan clusterResult // one value; nil once the run has taken it
}

type clusterResult struct {
	ev  *clusterProc // nil with a nil err: no cluster part (no -kube-bin)
	err error
}

// startCluster starts the cluster part in the background. The node part does not wait for
// it: a first `make run` shows the node's logs while the API server compiles.
func startCluster(ctx context.Context, kubeBin, buildCmd, eventsBin, clusterBin, nodeBin, dir string, args []string) *clusterStart {
	cl := &clusterStart{result: make(chan clusterResult, 1)}
	if kubeBin == "" {
		cl.result <- clusterResult{}
		return cl
	}
	if buildCmd != "" {
		b, err := startKubeBuild(ctx, []string{kubeBin, eventsBin, clusterBin}, buildCmd, filepath.Join(dir, "cluster-build.log"))
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
		for _, b := range []string{kubeBin, eventsBin, clusterBin} {
			if _, err := os.Stat(b); err != nil {
				cl.result <- clusterResult{err: fmt.Errorf("%w; `make build-only kube-bin` builds what the cluster part runs", err)}
				return
			}
		}
		ev, err := startClusterProc(ctx, clusterBin, append([]string{
			"-kube-bin", kubeBin, "-events-bin", eventsBin, "-bin", nodeBin, "-dir", filepath.Join(dir, "cluster"),
		}, args...))
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

// clusterProc is the running cluster program; it prints its own reports to this one's output.
type clusterProc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it exited
	err  error         // its exit, once done
	ctx  context.Context
}

// startClusterProc starts the cluster program with args; it stops when ctx ends.
func startClusterProc(ctx context.Context, bin string, args []string) (*clusterProc, error) {
	cmd := exec.Command(bin, args...) //nolint:gosec // the program the Makefile built
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the cluster part: %w", err)
	}
	p := &clusterProc{cmd: cmd, done: make(chan struct{}), ctx: ctx}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	context.AfterFunc(ctx, p.stop)
	return p, nil
}

// exited reports a cluster program that ended on its own.
func (p *clusterProc) exited() error {
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		if p.ctx.Err() != nil {
			return nil
		}
		if p.err == nil {
			return errors.New("the cluster part exited")
		}
		return fmt.Errorf("the cluster part exited: %w", p.err)
	default:
		return nil
	}
}

// stop interrupts the cluster program, which stops what it started and prints its last report,
// and waits for it (a minute at most).
func (p *clusterProc) stop() {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}
