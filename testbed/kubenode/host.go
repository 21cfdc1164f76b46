// SPDX-License-Identifier: Apache-2.0

package kubenode

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// kubeletSysctls are the kernel settings the kubelet changes when it starts (its
// container manager's "kernel tunables", with protectKernelDefaults false); Stop puts back the
// values it found.
var kubeletSysctls = []string{
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
}

// fixedPaths are the host paths outside the scratch directory that the node's programs write
// to whatever their configuration says: the kubelet's device plug-in socket
// (/var/lib/kubelet/device-plugins), the Pod log folders and their symlinks, the containerd
// shims' sockets (/run/containerd/s), network namespaces of Pods that are not on the host
// network, the CNI plug-ins' cache, and the journal folder a Config.Journal file may need.
// Stop removes what was not there at Start.
var fixedPaths = []string{
	"/var/lib/kubelet",
	"/var/log/pods",
	"/var/log/containers",
	"/run/containerd",
	"/run/netns",
	"/var/lib/cni",
	"/usr/libexec/kubernetes",
	"/etc/kubernetes",
	"/run/log/journal",
}

// cgroupRoot is where the cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// hostState is what Start found of the host, to compare with and restore at Stop.
type hostState struct {
	sysctls map[string]string // kubeletSysctls -> value
	paths   map[string]bool   // every file and folder under fixedPaths (the roots included)
	cgroups map[string]bool   // every cgroup folder under cgroupRoot
	mounts  map[string]bool   // mount points
}

func snapshotHost() (*hostState, error) {
	h := &hostState{sysctls: map[string]string{}}
	for _, k := range kubeletSysctls {
		v, err := os.ReadFile("/proc/sys/" + k)
		if err != nil {
			return nil, err
		}
		h.sysctls[k] = strings.TrimSpace(string(v))
	}
	h.paths = walkPaths(fixedPaths)
	h.cgroups = listCgroups()
	var err error
	if h.mounts, err = mountPoints(); err != nil {
		return nil, err
	}
	return h, nil
}

// walkPaths lists the files and folders under roots (the roots included when they exist).
func walkPaths(roots []string) map[string]bool {
	out := map[string]bool{}
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
			if err != nil {
				return nil //nolint:nilerr // a vanished or unreadable entry is skipped
			}
			out[path] = true
			return nil
		})
	}
	return out
}

// listCgroups lists the cgroup folders of every hierarchy (v1 controllers or the v2 tree).
func listCgroups() map[string]bool {
	out := map[string]bool{}
	_ = filepath.WalkDir(cgroupRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // a cgroup removed during the walk
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil // cpu,cpuacct style links to a hierarchy walked under its own name
		}
		if d.IsDir() {
			out[path] = true
		}
		return nil
	})
	return out
}

// mountPoints returns the mount points of this mount namespace.
func mountPoints() (map[string]bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			out[unescapeMount(fields[4])] = true
		}
	}
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space and so on).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// restore undoes what the node left on the host since h was taken: mounts first (deepest
// first), then cgroups (deepest first, retried while their last processes exit), then files
// and folders under fixedPaths, then the sysctls. It returns every step that failed.
func (h *hostState) restore(scratch string) error {
	var errs []error
	now, err := mountPoints()
	if err != nil {
		errs = append(errs, err)
	}
	for _, m := range deepestFirst(ours(newKeys(now, h.mounts), mountPrefixes(scratch))) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	for _, cg := range deepestFirst(nodeCgroups(newKeys(listCgroups(), h.cgroups))) {
		if err := removeCgroup(cg); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range deepestFirst(newKeys(walkPaths(fixedPaths), h.paths)) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for k, v := range h.sysctls {
		cur, err := os.ReadFile("/proc/sys/" + k)
		if err == nil && strings.TrimSpace(string(cur)) == v {
			continue
		}
		if err := os.WriteFile("/proc/sys/"+k, []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("sysctl %s: %w", k, err))
		}
	}
	return errors.Join(errs...)
}

// removeCgroup removes an empty cgroup folder, retrying for a while when it is busy (its
// processes are still exiting).
func removeCgroup(path string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := syscall.Rmdir(path)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w", path, err)
		}
		time.Sleep(100 * time.Millisecond) // the kernel gives no notice of a cgroup's last exit here
	}
}

// mountPrefixes are the folders under which the node's programs mount: the scratch folder
// (the kubelet's root, containerd's root and state) and the fixed host paths. Mounts elsewhere
// belong to someone else on the machine and are left alone.
func mountPrefixes(scratch string) []string {
	return append([]string{scratch}, fixedPaths...)
}

// ours returns the paths at or under one of the prefixes.
func ours(paths, prefixes []string) []string {
	var out []string
	for _, p := range paths {
		for _, pre := range prefixes {
			if p == pre || strings.HasPrefix(p, pre+"/") {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// nodeCgroups returns the cgroups of the kubelet's hierarchy (the "kubepods" folder of each
// controller, where the kubelet puts every Pod and containerd every container), the only
// cgroups the node creates with the cgroupfs driver. Other new cgroups on the machine are not
// the node's and are left alone.
func nodeCgroups(paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.Contains(p+"/", "/kubepods/") {
			out = append(out, p)
		}
	}
	return out
}

// diff describes what differs between the host now and h: the leftovers of a node.
func (h *hostState) diff(scratch string) []string {
	var out []string
	for k, v := range h.sysctls {
		cur, err := os.ReadFile("/proc/sys/" + k)
		if err != nil || strings.TrimSpace(string(cur)) != v {
			out = append(out, fmt.Sprintf("sysctl %s is %q, was %q", k, strings.TrimSpace(string(cur)), v))
		}
	}
	if now, err := mountPoints(); err == nil {
		for _, m := range ours(newKeys(now, h.mounts), mountPrefixes(scratch)) {
			out = append(out, "mount "+m)
		}
	}
	// Every new cgroup of the kubelet's hierarchy is reported. A new cgroup elsewhere is
	// reported only when it holds a process that names the scratch folder: a place the node put
	// something that Stop does not know of. Other processes on the machine (other tests, the
	// session's own scopes) make and remove cgroups of their own at any time.
	for _, cg := range newKeys(listCgroups(), h.cgroups) {
		if len(nodeCgroups([]string{cg})) == 1 || holdsProcessMentioning(cg, scratch) {
			out = append(out, "cgroup "+cg)
		}
	}
	for _, p := range newKeys(walkPaths(fixedPaths), h.paths) {
		out = append(out, "path "+p)
	}
	sort.Strings(out)
	return out
}

// holdsProcessMentioning reports whether a process of cgroup cg has s in its command line.
func holdsProcessMentioning(cg, s string) bool {
	b, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
	if err != nil {
		return false
	}
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err == nil && strings.Contains(string(cmd), s) {
			return true
		}
	}
	return false
}

// newKeys returns the keys of now that were not in before, sorted.
func newKeys(now, before map[string]bool) []string {
	var out []string
	for k := range now {
		if !before[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// deepestFirst orders paths so that every path comes before its parent.
func deepestFirst(paths []string) []string {
	sort.Slice(paths, func(i, j int) bool {
		di, dj := strings.Count(paths[i], "/"), strings.Count(paths[j], "/")
		if di != dj {
			return di > dj
		}
		return paths[i] > paths[j]
	})
	return paths
}
