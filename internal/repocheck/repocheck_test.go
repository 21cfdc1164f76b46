// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const spdxLine = "// SPDX-License-Identifier: Apache-2.0"

// maxBinarySize is the largest binary file the repository may track.
const maxBinarySize = 1 << 20

// ocbGenerated are the folders ocb writes; their files are upstream's and carry no identifier.
var ocbGenerated = []string{"cmd/otelcol-k8s/", "cmd/otelcol-k8s-node/"}

// trackedFiles lists the repository's tracked files, relative to its root.
func trackedFiles(t *testing.T) (root string, files []string) {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git work tree: %v", err)
	}
	root = strings.TrimSpace(string(out))
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("git ls-files listed no file")
	}
	return root, files
}

func TestLicenseFile(t *testing.T) {
	root, _ := trackedFiles(t)
	b, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatalf("LICENSE: %v", err)
	}
	for _, want := range []string{"Apache License", "Version 2.0, January 2004", "TERMS AND CONDITIONS"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("LICENSE lacks %q", want)
		}
	}
}

func TestEveryGoFileHasSPDX(t *testing.T) {
	root, files := trackedFiles(t)
	checked := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") || hasAnyPrefix(f, ocbGenerated) || strings.Contains(f, "/testdata/") {
			continue
		}
		checked++
		first, err := firstLine(filepath.Join(root, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if first != spdxLine {
			t.Errorf("%s: first line is %q, want %q", f, first, spdxLine)
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d Go files; the listing is wrong", checked)
	}
}

func TestNoLargeBinaryTracked(t *testing.T) {
	root, files := trackedFiles(t)
	for _, f := range files {
		info, err := os.Lstat(filepath.Join(root, f))
		if err != nil || !info.Mode().IsRegular() || info.Size() <= maxBinarySize {
			continue
		}
		binary, err := looksBinary(filepath.Join(root, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if binary {
			t.Errorf("%s: a binary of %d bytes is tracked (at most %d); build outputs belong in bin/ or .gitignore", f, info.Size(), maxBinarySize)
		}
	}
}

// TestLooksBinary checks the classifier the binary rule depends on.
func TestLooksBinary(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		content []byte
		want    bool
	}{
		{"text", []byte("package main\n\nfunc main() {}\n"), false},
		{"utf8", []byte("héllo wörld ✓\n"), false},
		{"elf", append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 64)...), true},
		{"nul late", append(bytes.Repeat([]byte("a"), 4000), 0), true},
	}
	for _, tc := range cases {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, tc.content, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := looksBinary(p)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: looksBinary = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func firstLine(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	if sc.Scan() {
		return sc.Text(), nil
	}
	return "", sc.Err()
}

// looksBinary reports whether the file's first 8 KiB hold a NUL byte, as git itself decides.
func looksBinary(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, 8000)
	n, err := f.Read(buf)
	if err != nil && n == 0 {
		return false, err
	}
	return bytes.IndexByte(buf[:n], 0) >= 0, nil
}
