// SPDX-License-Identifier: Apache-2.0

package kubenode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Stop stops the node and leaves the host as Start found it:
//
//  1. the scheduler and the controller manager stop, so that nothing is re-created; then the
//     kubelet (its Pods keep running: a kubelet never stops them when it exits);
//  2. every Pod sandbox is stopped and removed through containerd's CRI service, which stops
//     their containers, tears down their networks and unmounts their files;
//  3. containerd stops; a shim or container process still alive is killed (the shims name
//     the scratch folder; the containers are in the cgroups the node created);
//  4. the API server stops;
//  5. mounts, cgroups, files under the fixed host paths and the kubelet's sysctls are put back
//     as they were (host.go);
//  6. the scratch folder is removed (unless KeepDir or the clean-up failed).
//
// It returns everything that could not be undone, and what still differs from the host as it
// was at Start (Leftovers). Calling it again returns the first result.
func (n *Node) Stop(ctx context.Context) error {
	n.stopOnce.Do(func() { n.stopErr = n.stop(ctx) })
	return n.stopErr
}

func (n *Node) stop(ctx context.Context) error {
	var errs []error
	for _, name := range []string{"kube-scheduler", "kube-controller-manager", "kubelet"} {
		if p := n.proc(name); p != nil {
			if err := p.stop(30 * time.Second); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if p := n.proc("containerd"); p != nil {
		if err := n.removeSandboxes(ctx); err != nil {
			errs = append(errs, err)
		}
		if err := p.stop(30 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	// Shims outlive containerd by design; they name its socket, in the scratch folder.
	for _, pid := range pidsMentioning(n.dir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if n.host != nil {
		for _, pid := range n.host.processesInNewCgroups() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for _, p := range n.procs {
		if err := p.stop(30 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if n.host != nil {
		if err := n.host.restore(n.dir); err != nil {
			errs = append(errs, err)
		}
	}
	left := n.Leftovers()
	if len(left) > 0 {
		errs = append(errs, fmt.Errorf("left on the host: %s", strings.Join(left, "; ")))
	}
	if len(errs) == 0 && !n.cfg.KeepDir && n.cfg.Dir == "" {
		if err := os.RemoveAll(n.dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kubenode: stop: %w", err)
	}
	return nil
}

// Leftovers lists what differs from the host as Start found it: processes that name the
// scratch folder, mounts, cgroups, files under the fixed host paths, the kubelet's sysctls.
// After a successful Stop it is empty.
func (n *Node) Leftovers() []string {
	var out []string
	for _, p := range processesMentioning(n.dir) {
		out = append(out, "process "+p)
	}
	if n.host != nil {
		out = append(out, n.host.diff(n.dir)...)
	}
	return out
}

func (n *Node) proc(name string) *proc {
	for _, p := range n.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

// removeSandboxes stops and removes every Pod sandbox through the CRI, as the kubelet does
// when a Pod is deleted.
func (n *Node) removeSandboxes(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+n.containerdSock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	resp, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("list Pod sandboxes: %w", err)
	}
	var errs []error
	for _, sb := range resp.GetItems() {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("stop sandbox %s: %w", sb.GetId(), err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("remove sandbox %s: %w", sb.GetId(), err))
		}
	}
	return errors.Join(errs...)
}

// pidsMentioning returns the ids of processesMentioning(s).
func pidsMentioning(s string) []int {
	var out []int
	for _, p := range processesMentioning(s) {
		if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// processesInNewCgroups returns the processes in the kubelet's cgroups created since h was
// taken: the containers of the node, which only the node put there.
func (h *hostState) processesInNewCgroups() []int {
	var out []int
	for _, cg := range nodeCgroups(newKeys(listCgroups(), h.cgroups)) {
		b, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}
