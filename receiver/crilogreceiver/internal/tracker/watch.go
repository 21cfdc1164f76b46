// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// expand lists what one include pattern matches in a single walk, one directory level at a time,
// each directory listed once: the matched paths (sorted) and the directories that can hold
// matched files or directories on the way to them. The second is what is watched: the
// pattern's static prefix ("/var/log/pods"), or its nearest existing ancestor when the prefix
// does not exist yet (a node whose /var/log/pods appears after the collector starts), and every
// directory matched by a directory level of the pattern (so a new pod directory, then its
// container directory, then its 0.log are each seen at once). Matching is filepath.Match's, as
// filepath.Glob's; a pattern is valid (Validate checked it).
func expand(pattern string, dirs map[string]bool) (files []string) {
	pattern = filepath.Clean(pattern)
	parts := strings.Split(pattern, string(filepath.Separator))
	static := 0
	for static < len(parts) && !hasMeta(parts[static]) {
		static++
	}
	if static == len(parts) {
		// No pattern at all: the path itself.
		if d, ok := existingAncestor(filepath.Dir(pattern)); ok {
			dirs[d] = true
		}
		if _, err := os.Lstat(pattern); err == nil {
			files = append(files, pattern)
		}
		return files
	}
	prefix := strings.Join(parts[:static], string(filepath.Separator))
	if prefix == "" && filepath.IsAbs(pattern) {
		prefix = string(filepath.Separator)
	}
	if prefix == "" {
		prefix = "."
	}
	if st, err := os.Stat(prefix); err != nil || !st.IsDir() {
		if d, ok := existingAncestor(prefix); ok {
			dirs[d] = true
		}
		return nil
	}
	dirs[prefix] = true
	level := []string{prefix}
	for i, part := range parts[static:] {
		last := static+i == len(parts)-1
		var next []string
		for _, dir := range level {
			for _, m := range listMatches(dir, part, last) {
				if !last {
					dirs[m] = true
				}
				next = append(next, m)
			}
		}
		level = next
	}
	slices.Sort(level)
	return level
}

// listMatches returns the entries of dir whose names match part; unless last, only those that
// are directories (or symbolic links to directories).
func listMatches(dir, part string, last bool) []string {
	if !hasMeta(part) {
		p := filepath.Join(dir, part)
		if last {
			if _, err := os.Lstat(p); err != nil {
				return nil
			}
		} else if st, err := os.Stat(p); err != nil || !st.IsDir() {
			return nil
		}
		return []string{p}
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil // removed since it was listed (a pod deleted)
	}
	entries, _ := f.ReadDir(-1) // what was read before an error is still listed
	_ = f.Close()               // read-only
	var out []string
	for _, e := range entries {
		if ok, _ := filepath.Match(part, e.Name()); !ok {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if !last && !e.IsDir() {
			if e.Type()&os.ModeSymlink == 0 {
				continue
			}
			if st, err := os.Stat(p); err != nil || !st.IsDir() {
				continue
			}
		}
		out = append(out, p)
	}
	return out
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
