// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	metadataTypeRE  = regexp.MustCompile(`(?m)^type: *([a-z0-9_]+) *$`)
	metadataClassRE = regexp.MustCompile(`(?m)^  class: *(receiver|processor|exporter|extension|connector) *$`)
	packageRE       = regexp.MustCompile(`(?m)^package ([a-z0-9_]+)`)
)

// TestComponentFolderNames keeps CONTRIBUTING's naming rule: a component lives in
// <kind>/<type without underscores><kind>/ and its Go package has the folder's name.
func TestComponentFolderNames(t *testing.T) {
	root, files := trackedFiles(t)
	checked := 0
	for _, f := range files {
		if filepath.Base(f) != "metadata.yaml" || strings.Contains(f, "testdata/") || strings.HasPrefix(f, "cmd/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		typ, class := metadataTypeRE.FindSubmatch(b), metadataClassRE.FindSubmatch(b)
		if typ == nil || class == nil {
			continue // not a component (no type, or a class we do not name)
		}
		checked++
		dir := filepath.Dir(f)
		want := string(class[1]) + "/" + strings.ReplaceAll(string(typ[1]), "_", "") + string(class[1])
		if dir != want {
			t.Errorf("component %s (%s) lives in %s; the rule says %s", typ[1], class[1], dir, want)
			continue
		}
		doc, err := os.ReadFile(filepath.Join(root, dir, "doc.go"))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		if p := packageRE.FindSubmatch(doc); p == nil || string(p[1]) != filepath.Base(dir) {
			t.Errorf("%s/doc.go: package %s, want %s", dir, p, filepath.Base(dir))
		}
	}
	if checked < 12 {
		t.Errorf("checked %d components, want all of them (at least 12)", checked)
	}
}
