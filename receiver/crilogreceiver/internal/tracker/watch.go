package tracker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// expand lists the paths matched by pattern, as filepath.Glob does (the last element may match
// any kind of entry; the levels above it match directories, through symlinks), and calls visit
// for every directory before it looks into it: the pattern's static prefix, or, when that does
// not exist yet (a node whose /var/log/pods appears after the collector starts), its nearest
// existing ancestor; and every directory matched by a directory level of the pattern. A watcher
// that adds its watch in visit sees every entry created after the walk looked. One walk costs an
// open, a getdents and a close per directory listed (and a stat per symlink on the way), where
// Glob also stats each directory it enters. Unreadable directories are skipped, as Glob does.
func expand(pattern string, visit func(dir string)) []string {
	pattern = filepath.Clean(pattern)
	prefix, rest := pattern, []string(nil)
	for hasMeta(prefix) {
		rest = append(rest, filepath.Base(prefix))
		prefix = filepath.Dir(prefix)
	}
	if len(rest) == 0 { // no pattern at all: the path itself, when it exists
		if d, ok := existingAncestor(filepath.Dir(pattern)); ok && visit != nil {
			visit(d)
		}
		if _, err := os.Lstat(pattern); err != nil {
			return nil
		}
		return []string{pattern}
	}
	slices.Reverse(rest)
	if st, err := os.Stat(prefix); err != nil || !st.IsDir() {
		if d, ok := existingAncestor(prefix); ok && visit != nil {
			visit(d)
		}
		return nil
	}
	dirs := []string{prefix}
	for i, elem := range rest {
		last := i == len(rest)-1
		var next []string
		for _, dir := range dirs {
			if visit != nil {
				visit(dir)
			}
			if !hasMeta(elem) {
				p := filepath.Join(dir, elem)
				if last {
					if _, err := os.Lstat(p); err == nil {
						next = append(next, p)
					}
				} else if st, err := os.Stat(p); err == nil && st.IsDir() {
					next = append(next, p)
				}
				continue
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range entries {
				if ok, _ := filepath.Match(elem, e.Name()); !ok {
					continue
				}
				p := filepath.Join(dir, e.Name())
				if !last && !isDir(p, e) {
					continue
				}
				next = append(next, p)
			}
		}
		dirs = next
	}
	return dirs
}

// isDir reports whether the entry e at p is a directory, following a symlink.
func isDir(p string, e os.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&os.ModeSymlink == 0 {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
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
