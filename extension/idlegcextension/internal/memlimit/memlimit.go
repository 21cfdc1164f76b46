// SPDX-License-Identifier: Apache-2.0

// Package memlimit gives the Go runtime a soft memory limit derived from the container's
// cgroup memory limit when the process was started without GOMEMLIMIT.
package memlimit // import "github.com/otelcol-k8s/otelcol-k8s/extension/idlegcextension/internal/memlimit"

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// noLimit is what the runtime reports when no limit is set.
const noLimit = math.MaxInt64

// FS is where the cgroup files are read from; the root directory of a real system.
type FS struct {
	// Root replaces "/" (tests point it at a fake tree).
	Root string
}

// CgroupLimit returns the memory limit of the cgroup the process runs in (cgroup v2, else
// v1), and false when there is none or it cannot be read.
func (f FS) CgroupLimit() (int64, bool) {
	root := f.Root
	if root == "" {
		root = "/"
	}
	for _, p := range f.v2Paths(root) {
		if n, ok := readLimit(p); ok {
			return n, true
		}
	}
	return readLimit(filepath.Join(root, "sys/fs/cgroup/memory/memory.limit_in_bytes"))
}

// v2Paths lists the memory.max files to try: the process's own cgroup (from
// /proc/self/cgroup) and the cgroup root, which is the container's own cgroup when the
// container has a cgroup namespace.
func (f FS) v2Paths(root string) []string {
	var paths []string
	if raw, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
				paths = append(paths, filepath.Join(root, "sys/fs/cgroup", filepath.Clean("/"+rest), "memory.max"))
			}
		}
	}
	return append(paths, filepath.Join(root, "sys/fs/cgroup/memory.max"))
}

// readLimit reads a cgroup memory limit file; "max" and v1's "unlimited" (a page-rounded
// huge number) are no limit.
func readLimit(path string) (int64, bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(raw))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<60 {
		return 0, false
	}
	return n, true
}

// Decision is what Apply did.
type Decision struct {
	// Limit is the limit set in bytes, 0 when none was set.
	Limit int64
	// Cgroup is the cgroup's limit it was derived from.
	Cgroup int64
	// Reason says why no limit was set (empty when one was).
	Reason string
}

var (
	once     sync.Once
	decision Decision
)

// Apply sets the runtime's memory limit to ratio (0 to 1) of the cgroup's limit, once per
// process, unless GOMEMLIMIT is set or a limit was already set; later calls return the first
// decision.
func Apply(f FS, ratio float64) Decision {
	once.Do(func() { decision = decide(f, os.Getenv("GOMEMLIMIT"), debug.SetMemoryLimit, ratio) })
	return decision
}

// decide is Apply's logic with the environment and the runtime passed in.
func decide(f FS, env string, setLimit func(int64) int64, ratio float64) Decision {
	if env != "" {
		return Decision{Reason: "GOMEMLIMIT is set"}
	}
	if cur := setLimit(-1); cur != noLimit {
		return Decision{Reason: "a memory limit is already set"}
	}
	cg, ok := f.CgroupLimit()
	if !ok {
		return Decision{Reason: "no cgroup memory limit"}
	}
	limit := int64(float64(cg) * ratio)
	setLimit(limit)
	return Decision{Limit: limit, Cgroup: cg}
}
