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
// directories on the way to them. When a pattern's static prefix does not exist yet (a node
// whose /var/log/pods appears after the collector starts), its nearest existing ancestor is
// watched instead, so the prefix's creation triggers discovery at once and the next refresh
// moves the watch down.
func watchDirs(include []string) map[string]bool {
	dirs := map[string]bool{}
	for _, inc := range include {
		for _, p := range dirPatterns(inc) {
			if !hasMeta(p) {
				if d, ok := existingAncestor(p); ok {
					dirs[d] = true // the prefix itself when it exists
				}
				continue
			}
			matches, _ := filepath.Glob(p)
			for _, d := range matches {
				if st, err := os.Stat(d); err == nil && st.IsDir() {
					dirs[d] = true
				}
			}
		}
	}
	return dirs
}

// existingAncestor returns the nearest of p and its ancestors that exists, and whether that is a
// directory.
func existingAncestor(p string) (string, bool) {
	for {
		if st, err := os.Stat(p); err == nil {
			return p, st.IsDir()
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", false
		}
		p = parent
	}
}
