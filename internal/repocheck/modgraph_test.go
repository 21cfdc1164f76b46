// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// knownCrossComponentRequirements are the component modules that still require another
// component module, each with the folders it reaches. The list only shrinks (it is empty now):
// the test fails when a requirement appears that is not listed, and when a listed one is gone
// (remove it here). A test that runs two components together belongs in a testbed module
// (testbed/crosscomponent; CONTRIBUTING.md, "A component module").
var knownCrossComponentRequirements = map[string][]string{}

// ourModule is one go.mod of the repository.
type ourModule struct {
	dir      string   // folder relative to the root, "." for the root module
	requires []string // module paths required, direct and indirect (tests included)
}

// TestNoComponentRequiresAnother: importing one component must not drag in another. A
// component module is a folder with a metadata.yaml and a go.mod; it may require the shared
// modules (internal/..., pkg/...), never another component, directly, indirectly or for its
// tests only (a collector build resolves every module a go.mod names), nor through one of the
// repository's other modules.
func TestNoComponentRequiresAnother(t *testing.T) {
	root, files := trackedFiles(t)
	modules := map[string]*ourModule{} // by module path
	components := map[string]string{}  // module path -> folder
	for _, f := range files {
		if path.Base(f) != "go.mod" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		mf, err := modfile.ParseLax(f, raw, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if mf.Module == nil {
			t.Fatalf("%s has no module line", f)
		}
		m := &ourModule{dir: path.Dir(f)}
		for _, r := range mf.Require {
			m.requires = append(m.requires, r.Mod.Path)
		}
		modules[mf.Module.Mod.Path] = m
		if _, err := os.Stat(filepath.Join(root, m.dir, "metadata.yaml")); err == nil {
			components[mf.Module.Mod.Path] = m.dir
		}
	}
	if len(components) < 2 {
		t.Fatalf("found %d component modules; the repository layout changed under this test", len(components))
	}
	got := crossComponentRequirements(modules, components)
	for comp, reached := range got {
		known := knownCrossComponentRequirements[comp]
		for _, r := range reached {
			if !slices.Contains(known, r) {
				t.Errorf("component module %s requires component module %s (through its go.mod, tests included): move the test that needs both into a testbed module", comp, r)
			}
		}
	}
	for comp, known := range knownCrossComponentRequirements {
		for _, r := range known {
			if !slices.Contains(got[comp], r) {
				t.Errorf("%s no longer requires %s: remove it from knownCrossComponentRequirements", comp, r)
			}
		}
	}
}

// crossComponentRequirements returns, for each component folder, the folders of the other
// components it reaches through the requirements among the repository's modules.
func crossComponentRequirements(modules map[string]*ourModule, components map[string]string) map[string][]string {
	out := map[string][]string{}
	for compPath, compDir := range components {
		seen := map[string]bool{compPath: true}
		queue := []string{compPath}
		for len(queue) > 0 {
			m := modules[queue[0]]
			queue = queue[1:]
			for _, r := range m.requires {
				if seen[r] || modules[r] == nil {
					continue
				}
				seen[r] = true
				if dir, ok := components[r]; ok {
					out[compDir] = append(out[compDir], dir)
				}
				queue = append(queue, r)
			}
		}
		sort.Strings(out[compDir])
	}
	return out
}

func TestCrossComponentRequirements(t *testing.T) {
	mods := map[string]*ourModule{
		"r/a":        {dir: "receiver/a", requires: []string{"shared", "ext"}},
		"p/b":        {dir: "processor/b", requires: []string{"shared"}},
		"e/c":        {dir: "exporter/c", requires: []string{"helper"}},
		"shared":     {dir: "internal/shared"},
		"helper":     {dir: "internal/helper", requires: []string{"p/b"}},
		"testbed/tb": {dir: "testbed/tb", requires: []string{"r/a", "p/b"}},
	}
	comps := map[string]string{"r/a": "receiver/a", "p/b": "processor/b", "e/c": "exporter/c"}
	got := crossComponentRequirements(mods, comps)
	want := map[string][]string{"exporter/c": {"processor/b"}} // through a shared module; "ext" is not ours
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if strings.Contains(fmt.Sprint(got), "testbed") {
		t.Fatal("a testbed module may require any component")
	}
}
