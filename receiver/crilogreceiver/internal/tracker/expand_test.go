// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// expandTree is a node's log directory with what expand must handle: pods with several
// containers and restarts, rotated and other files beside the logs, a file where a directory is
// expected, a symlinked pod directory and a symlinked log, a dangling symlink, an empty pod.
func expandTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	pods := filepath.Join(root, "var", "log", "pods")
	files := []string{
		"ns_a-1_u1/app/0.log", "ns_a-1_u1/app/1.log", "ns_a-1_u1/app/0.log.20240501-100000",
		"ns_a-1_u1/sidecar/0.log", "ns_a-1_u1/notes.txt",
		"kube-system_dns-2_u2/coredns/0.log", "kube-system_dns-2_u2/coredns/0.log.20240501-100000.gz",
		"ns_b-3_u3/app/0.log",
		"stray.log",
	}
	for _, f := range files {
		p := filepath.Join(pods, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"ns_empty-4_u4", "ns_c-5_u5/app.log"} { // a directory named like a log
		if err := os.MkdirAll(filepath.Join(pods, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere := filepath.Join(root, "elsewhere", "ns_d-6_u6")
	if err := os.MkdirAll(filepath.Join(elsewhere, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "app", "0.log"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"ns_d-6_u6":             elsewhere,
		"ns_b-3_u3/app/2.log":   filepath.Join(pods, "ns_b-3_u3", "app", "0.log"),
		"ns_b-3_u3/gone":        filepath.Join(root, "nothing"),
		"ns_b-3_u3/app/3.log":   filepath.Join(root, "nothing.log"),
		"ns_a-1_u1/app/dir.log": filepath.Join(pods, "ns_b-3_u3"),
	} {
		if err := os.Symlink(target, filepath.Join(pods, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// globDirs is the rule expand's visits must follow, computed with filepath.Glob: the static
// prefix of pattern (or its nearest existing ancestor directory when it does not exist) and
// every directory that a directory level of pattern matches.
func globDirs(pattern string) []string {
	var out []string
	dir := filepath.Dir(filepath.Clean(pattern))
	for {
		if !hasMeta(dir) {
			if d, ok := existingAncestor(dir); ok {
				out = append(out, d)
			}
			break
		}
		matches, _ := filepath.Glob(dir)
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				out = append(out, m)
			}
		}
		dir = filepath.Dir(dir)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestExpandIsGlob(t *testing.T) {
	root := expandTree(t)
	pods := filepath.Join(root, "var", "log", "pods")
	for _, pattern := range []string{
		filepath.Join(pods, "*", "*", "*.log"),
		filepath.Join(pods, "*", "*", "*"),
		filepath.Join(pods, "ns_*", "app", "*.log"),
		filepath.Join(pods, "*", "app", "0.log"),
		filepath.Join(pods, "kube-system_*", "*", "[0-9].log"),
		filepath.Join(pods, "*.log"),
		filepath.Join(pods, "*", "*.log"),
		filepath.Join(pods, "ns_a-1_u1", "app", "0.log"),
		filepath.Join(pods, "ns_a-1_u1", "app", "9.log"),
		filepath.Join(root, "var", "log", "nopods", "*", "*", "*.log"),
		filepath.Join(pods, "stray.log", "*", "*.log"),
		filepath.Join(pods, "*", "gone", "*.log"),
	} {
		t.Run(pattern[len(root):], func(t *testing.T) {
			want, err := filepath.Glob(pattern)
			if err != nil {
				t.Fatal(err)
			}
			var visited []string
			got := expand(pattern, func(d string) { visited = append(visited, d) })
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("expand = %q\nGlob   = %q", got, want)
			}
			slices.Sort(visited)
			if want := globDirs(pattern); !slices.Equal(visited, want) {
				t.Errorf("visited = %q\nwant      %q", visited, want)
			}
		})
	}
}

func TestExpandVisitsBeforeListing(t *testing.T) {
	root := expandTree(t)
	pods := filepath.Join(root, "var", "log", "pods")
	// A directory created in a visited directory while the walk goes on is found by the walk
	// or (once visit watched it) would raise an event: here the walk creates a container
	// directory with a log in a pod directory when it visits that pod directory, and the
	// walk, which lists the pod directory after the visit, finds it.
	late := filepath.Join(pods, "ns_b-3_u3", "late")
	got := expand(filepath.Join(pods, "*", "*", "*.log"), func(d string) {
		if d == filepath.Join(pods, "ns_b-3_u3") {
			if err := os.MkdirAll(late, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(late, "0.log"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
	if !slices.Contains(got, filepath.Join(late, "0.log")) {
		t.Fatalf("the walk listed a directory before visiting it: %q", got)
	}
}

// trackerReusing is testTracker with the pinner's expansion reused for maxAge.
func trackerReusing(t *testing.T, root string, maxAge time.Duration) *Tracker {
	t.Helper()
	return New(Config{
		Include:            []string{filepath.Join(root, "*", "*", "*.log")},
		MaxConcurrentFiles: 100,
		ExpansionMaxAge:    maxAge,
		Read:               ReadConfig{FingerprintSize: 64, MaxLogSize: 1024, MaxBytesPerRead: 4096, FlushTimeout: 1e9, MultilineFlushTimeout: 1e9},
	}, nil, true)
}

func TestDiscoverUsesThePinnersExpansion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		maxAge time.Duration
		// scanBefore: the pinner scans once before the second file is written.
		scanBefore bool
		wantFiles  int
	}{
		// The pinner's expansion (taken before b.log existed) is recent enough: the loop's
		// discovery uses it and does not walk the directories; b.log waits for the pinner.
		{"recent expansion", time.Minute, true, 1},
		// Too old an expansion (or reuse off, or none yet): the loop expands the patterns.
		{"expansion too old", time.Nanosecond, true, 2},
		{"reuse off", 0, true, 2},
		{"no scan yet", time.Minute, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "ns_a_1", "c", "a.log"), line(1), false)
			tr := trackerReusing(t, root, tc.maxAge)
			if tc.scanBefore {
				tr.Pinner().ScanPaths([]string{filepath.Join(root, "ns_a_1", "c", "a.log")})
				for _, p := range tr.Pinner().take() { // the loop adopts nothing here
					_ = p.f.Close()
					tr.Pinner().forget(p.id)
				}
			}
			time.Sleep(time.Millisecond)
			writeFile(t, filepath.Join(root, "ns_b_2", "c", "b.log"), line(2), false)
			_, errs := tr.Discover(1)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if got := tr.Len(); got != tc.wantFiles {
				t.Fatalf("tracked %d files, want %d", got, tc.wantFiles)
			}
		})
	}
}

// A file pinned by a scan is at a matched path in the expansion Discover then uses: adopted as
// a live file, not as one rotated away since it was pinned.
func TestPinnedFileIsPresentInTheExpansion(t *testing.T) {
	root := t.TempDir()
	tr := trackerReusing(t, root, time.Minute)
	_, _ = tr.Discover(1) // the first discovery: nothing yet
	path := filepath.Join(root, "ns_a_1", "c", "0.log")
	writeFile(t, path, line(1), false)
	tr.Pinner().Scan()
	if tr.Pinner().Pending() != 1 {
		t.Fatalf("pinned %d files", tr.Pinner().Pending())
	}
	_, errs := tr.Discover(2)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	rs := tr.Readers()
	if len(rs) != 1 || rs[0].Draining || rs[0].Path != path {
		t.Fatalf("readers = %+v", rs)
	}
	if got := readAll(t, tr, false); !slices.Equal(got, []string{"line 1"}) {
		t.Fatalf("read %q", got)
	}
}
