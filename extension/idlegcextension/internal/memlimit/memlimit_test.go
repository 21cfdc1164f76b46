// SPDX-License-Identifier: Apache-2.0

package memlimit

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func tree(t *testing.T, files map[string]string) FS {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return FS{Root: root}
}

func TestCgroupLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
		ok    bool
	}{
		{"v2, own cgroup", map[string]string{
			"proc/self/cgroup":                          "0::/kubepods/pod1/c1\n",
			"sys/fs/cgroup/kubepods/pod1/c1/memory.max": "536870912\n",
			"sys/fs/cgroup/memory.max":                  "max\n",
		}, 536870912, true},
		{"v2, cgroup namespace (root is the container)", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "268435456\n",
		}, 268435456, true},
		{"v2, unlimited", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "max\n",
		}, 0, false},
		{"v1", map[string]string{
			"proc/self/cgroup":                           "4:memory:/kubepods/pod1\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "104857600\n",
		}, 104857600, true},
		{"v1, unlimited", map[string]string{
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
		}, 0, false},
		{"no cgroup files", map[string]string{}, 0, false},
		{"garbage", map[string]string{"sys/fs/cgroup/memory.max": "lots\n"}, 0, false},
		{"path escaping the root stays inside", map[string]string{
			"proc/self/cgroup":         "0::/../../etc\n",
			"sys/fs/cgroup/memory.max": "1048576\n",
		}, 1048576, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := tree(t, tc.files).CgroupLimit()
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	limited := map[string]string{"sys/fs/cgroup/memory.max": "536870912\n"}
	for _, tc := range []struct {
		name    string
		files   map[string]string
		env     string
		current int64
		want    Decision
	}{
		{"derived from the cgroup", limited, "", math.MaxInt64, Decision{Limit: 429496729, Cgroup: 536870912}},
		{"GOMEMLIMIT wins", limited, "409MiB", math.MaxInt64, Decision{Reason: "GOMEMLIMIT is set"}},
		{"a limit set in code wins", limited, "", 100 << 20, Decision{Reason: "a memory limit is already set"}},
		{"no cgroup limit", map[string]string{}, "", math.MaxInt64, Decision{Reason: "no cgroup memory limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var set int64 = -1
			got := decide(tree(t, tc.files), tc.env, func(n int64) int64 {
				if n >= 0 {
					set = n
				}
				return tc.current
			}, 0.8)
			require.Equal(t, tc.want, got)
			if tc.want.Limit > 0 {
				require.Equal(t, tc.want.Limit, set)
			} else {
				require.Equal(t, int64(-1), set, "no limit may be set")
			}
		})
	}
}
