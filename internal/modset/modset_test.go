// SPDX-License-Identifier: Apache-2.0

package modset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

const prefix = "example.com/repo"

// fixture writes a small repository: released modules a (requiring b) and b, the excluded
// root module and testbed/srv; files maps a relative path to its content and overrides.
func fixture(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	base := map[string]string{
		"versions.yaml": `module-sets:
  main:
    version: v0.2.0
    modules:
      - example.com/repo/a
      - example.com/repo/b
excluded-modules:
  - example.com/repo
  - example.com/repo/testbed/srv
`,
		"go.mod":             "module example.com/repo\n\ngo 1.26.0\n",
		"a/go.mod":           "module example.com/repo/a\n\ngo 1.26.0\n\nrequire example.com/repo/b v0.0.0-00010101000000-000000000000 // indirect\n\nreplace example.com/repo/b => ../b\n",
		"a/a.go":             "package a\n",
		"a/sub/go.mod":       "", // removed below unless overridden: a nested module is not part of a's zip
		"b/go.mod":           "module example.com/repo/b\n\ngo 1.26.0\n",
		"b/b.go":             "package b\n",
		"testbed/srv/go.mod": "module example.com/repo/testbed/srv\n\ngo 1.26.0\n",
		"builder-config.yaml": `receivers:
  - gomod: example.com/repo/a v0.0.0
    path: ./a
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v0.160.0
`,
	}
	delete(base, "a/sub/go.mod")
	for k, v := range files {
		base[k] = v
	}
	for rel, content := range base {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func load(t *testing.T, root string) *Repo {
	t.Helper()
	r, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCheckFindsEveryDisagreement(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // substrings, one problem each, in order
	}{
		{
			name: "versions out of date",
			want: []string{
				"a/go.mod: requires example.com/repo/b v0.0.0-00010101000000-000000000000, the version set says v0.2.0",
				"builder-config.yaml: gomod example.com/repo/a v0.0.0, the version set says v0.2.0",
			},
		},
		{
			name: "released module requires a testbed module",
			files: map[string]string{
				"a/go.mod":            "module example.com/repo/a\n\ngo 1.26.0\n\nrequire example.com/repo/testbed/srv v0.0.0\n",
				"builder-config.yaml": "",
			},
			want: []string{"a/go.mod: released module example.com/repo/a requires example.com/repo/testbed/srv, which is never released"},
		},
		{
			name: "a module nobody listed, a listed one that is gone",
			files: map[string]string{
				"c/go.mod":            "module example.com/repo/c\n\ngo 1.26.0\n",
				"versions.yaml":       "module-sets:\n  main:\n    version: v0.2.0\n    modules: [example.com/repo/a, example.com/repo/b, example.com/repo/gone]\nexcluded-modules: [example.com/repo, example.com/repo/testbed/srv]\n",
				"a/go.mod":            "module example.com/repo/a\n\ngo 1.26.0\n",
				"builder-config.yaml": "",
			},
			want: []string{
				"c/go.mod: module example.com/repo/c is neither in a module set nor excluded",
				"versions.yaml: example.com/repo/gone has no go.mod in the tree",
			},
		},
		{
			name: "module path is not its folder",
			files: map[string]string{
				"b/go.mod":            "module example.com/repo/bee\n\ngo 1.26.0\n",
				"versions.yaml":       "module-sets:\n  main:\n    version: v0.2.0\n    modules: [example.com/repo/a, example.com/repo/bee]\nexcluded-modules: [example.com/repo, example.com/repo/testbed/srv]\n",
				"a/go.mod":            "module example.com/repo/a\n\ngo 1.26.0\n",
				"builder-config.yaml": "",
			},
			want: []string{"b/go.mod: module path example.com/repo/bee, want example.com/repo/b (the folder)"},
		},
		{
			name: "builder configuration names an unreleased module",
			files: map[string]string{
				"a/go.mod":            "module example.com/repo/a\n\ngo 1.26.0\n",
				"builder-config.yaml": "exporters:\n  - gomod: example.com/repo/testbed/srv v0.2.0\n",
			},
			want: []string{"builder-config.yaml: gomod example.com/repo/testbed/srv is never released"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := load(t, fixture(t, tt.files)).Check()
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d:\n got %s\nwant %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestSyncMakesCheckPass(t *testing.T) {
	root := fixture(t, map[string]string{
		"c/go.mod": "module example.com/repo/c\n\ngo 1.26.0\n\nrequire example.com/repo/a v0.0.0\n\nreplace example.com/repo/a v0.0.0 => ../a\n",
		"versions.yaml": `module-sets:
  main:
    version: v0.2.0 # the release
    modules: [example.com/repo/a, example.com/repo/b]
excluded-modules: [example.com/repo, example.com/repo/testbed/srv, example.com/repo/c]
`,
	})
	r := load(t, root)
	changed, err := r.Sync()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(changed, " "), "a/go.mod c/go.mod builder-config.yaml"; got != want {
		t.Errorf("changed %q, want %q", got, want)
	}
	if p := load(t, root).Check(); len(p) > 0 {
		t.Fatalf("after sync: %s", strings.Join(p, "\n"))
	}
	a, _ := os.ReadFile(filepath.Join(root, "a", "go.mod"))
	if want := "require example.com/repo/b v0.2.0 // indirect"; !strings.Contains(string(a), want) {
		t.Errorf("a/go.mod lost the indirect comment or the version:\n%s", a)
	}
	c, _ := os.ReadFile(filepath.Join(root, "c", "go.mod"))
	if want := "replace example.com/repo/a v0.2.0 => ../a"; !strings.Contains(string(c), want) {
		t.Errorf("c/go.mod: the version-qualified replace did not follow:\n%s", c)
	}
	bc, _ := os.ReadFile(filepath.Join(root, "builder-config.yaml"))
	if !strings.Contains(string(bc), "gomod: example.com/repo/a v0.2.0\n") || !strings.Contains(string(bc), "otlpreceiver v0.160.0") {
		t.Errorf("builder-config.yaml:\n%s", bc)
	}

	if err := SetVersion(root, "v0.3.0"); err != nil {
		t.Fatal(err)
	}
	v, _ := os.ReadFile(filepath.Join(root, File))
	if !strings.Contains(string(v), "version: v0.3.0 # the release") {
		t.Errorf("SetVersion lost the comment or did not write:\n%s", v)
	}
	if p := load(t, root).Check(); len(p) != 3 {
		t.Errorf("after a new version every requirement is behind, got:\n%s", strings.Join(p, "\n"))
	}
	for _, bad := range []string{"0.3.0", "v0.3", "v2.0.0-"} {
		if err := SetVersion(root, bad); err == nil {
			t.Errorf("SetVersion(%q) accepted", bad)
		}
	}
}

func TestLoadRefusesBadSets(t *testing.T) {
	for name, vy := range map[string]string{
		"not semver":    "module-sets:\n  m:\n    version: 1.0\n    modules: [example.com/repo/a]\n",
		"major 2":       "module-sets:\n  m:\n    version: v2.0.0\n    modules: [example.com/repo/a]\n",
		"listed twice":  "module-sets:\n  m:\n    version: v0.1.0\n    modules: [example.com/repo/a]\n  n:\n    version: v0.1.0\n    modules: [example.com/repo/a]\n",
		"unknown field": "module-set:\n  m:\n    version: v0.1.0\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Load(fixture(t, map[string]string{"versions.yaml": vy})); err == nil {
				t.Error("loaded")
			}
		})
	}
}

func TestProxyLayout(t *testing.T) {
	root := fixture(t, map[string]string{"a/sub/go.mod": "module example.com/repo/a/sub\n", "a/sub/s.go": "package sub\n"})
	r := load(t, root)
	out := t.TempDir()
	stamp := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	if err := r.WriteProxy(out, stamp); err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Released() {
		vdir := filepath.Join(out, filepath.FromSlash(m.Path), "@v")
		list, _ := os.ReadFile(filepath.Join(vdir, "list"))
		if string(list) != "v0.2.0\n" {
			t.Errorf("%s list %q", m.Path, list)
		}
		var info struct {
			Version string
			Time    time.Time
		}
		data, _ := os.ReadFile(filepath.Join(vdir, "v0.2.0.info"))
		if err := json.Unmarshal(data, &info); err != nil || info.Version != "v0.2.0" || !info.Time.Equal(stamp) {
			t.Errorf("%s info %s: %v", m.Path, data, err)
		}
		mod, _ := os.ReadFile(filepath.Join(vdir, "v0.2.0.mod"))
		src, _ := os.ReadFile(filepath.Join(root, r.Dir(m.Path), "go.mod"))
		if string(mod) != string(src) {
			t.Errorf("%s .mod differs from go.mod", m.Path)
		}
		cf, err := modzip.CheckZip(module.Version{Path: m.Path, Version: "v0.2.0"}, filepath.Join(vdir, "v0.2.0.zip"))
		if err != nil {
			t.Fatalf("%s zip: %v", m.Path, err)
		}
		for _, f := range cf.Valid {
			if strings.HasPrefix(f, "sub/") {
				t.Errorf("%s zip holds the nested module's %s", m.Path, f)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, prefix, "testbed")); !os.IsNotExist(err) {
		t.Errorf("an excluded module is served: %v", err)
	}
	if got, want := r.Tag(module.Version{Path: prefix + "/a", Version: "v0.2.0"}), "a/v0.2.0"; got != want {
		t.Errorf("tag %s, want %s", got, want)
	}
}
