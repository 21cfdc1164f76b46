package tracker

import (
	"os"
	"path/filepath"
	"strings"
)

// dirPatterns returns the patterns of every directory level of a file pattern:
// "/var/log/pods/*/*/*.log" gives "/var/log/pods/*/*", "/var/log/pods/*", "/var/log/pods".
func dirPatterns(pattern string) []string {
	dir := filepath.Dir(filepath.Clean(pattern))
	var out []string
	for {
		out = append(out, dir)
		if !hasMeta(dir) {
			break // the static prefix: nothing above it can hold a match
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return out
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// watchDirs returns the existing directories that can hold files matched by include, or
// directories on the way to them.
func watchDirs(include []string) map[string]bool {
	dirs := map[string]bool{}
	for _, inc := range include {
		for _, p := range dirPatterns(inc) {
			var matches []string
			if hasMeta(p) {
				matches, _ = filepath.Glob(p)
			} else {
				matches = []string{p}
			}
			for _, d := range matches {
				if st, err := os.Stat(d); err == nil && st.IsDir() {
					dirs[d] = true
				}
			}
		}
	}
	return dirs
}
