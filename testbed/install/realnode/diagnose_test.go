// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// diagnoseOnFailure logs, when the test fails, what a person would look at first: the end of
// each product container's log (read from the node's files) and the groups and streams the
// local server holds.
func diagnoseOnFailure(t *testing.T, e *env) {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		dirs, _ := filepath.Glob(filepath.Join("/var/log/pods", namespace+"_*", "*"))
		for _, d := range dirs {
			files, _ := filepath.Glob(filepath.Join(d, "*.log"))
			sort.Strings(files)
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					continue
				}
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				t.Logf("%s, last lines:\n%s", strings.TrimPrefix(f, "/var/log/pods/"), strings.Join(lines[max(0, len(lines)-25):], "\n"))
			}
		}
		var groups []string
		for _, g := range e.srv.Groups() {
			streams, _ := e.srv.Streams(g.Name)
			groups = append(groups, fmt.Sprintf("%s (%d streams)", g.Name, len(streams)))
		}
		t.Logf("the local server holds: %v", groups)
	})
}
