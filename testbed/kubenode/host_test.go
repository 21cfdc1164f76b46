// SPDX-License-Identifier: Apache-2.0

package kubenode

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCgroupsCountedAsLeftovers: a new cgroup is the node's when it lies in the kubelet's
// hierarchy or holds a process that names the scratch folder; another process's cgroup on the
// machine is not a leftover. cgroup.procs files stand in for the kernel's.
func TestCgroupsCountedAsLeftovers(t *testing.T) {
	cmdline, err := os.ReadFile("/proc/self/cmdline")
	require.NoError(t, err)
	self := string(cmdline[:len(cmdline)-1]) // this test binary's path, a string in its own command line
	procs := func(pids ...int) string {
		dir := t.TempDir()
		var b []byte
		for _, p := range pids {
			b = strconv.AppendInt(b, int64(p), 10)
			b = append(b, '\n')
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup.procs"), b, 0o600))
		return dir
	}
	for _, tc := range []struct {
		name    string
		cg      string
		mention string
		want    bool
	}{
		{"a process naming the scratch folder", procs(os.Getpid()), self, true},
		{"only processes naming something else", procs(os.Getpid()), "no-such-scratch-folder", false},
		{"empty", procs(), self, false},
		{"a process that exited", procs(1 << 30), self, false},
		{"no cgroup.procs", t.TempDir(), self, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, holdsProcessMentioning(tc.cg, tc.mention))
		})
	}
	assert.Equal(t, []string{"/sys/fs/cgroup/cpu/kubepods/besteffort"},
		nodeCgroups([]string{"/sys/fs/cgroup/cpu/kubepods/besteffort", "/sys/fs/cgroup/system.slice/session-4.scope"}))
}
