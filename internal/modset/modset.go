// SPDX-License-Identifier: Apache-2.0

// Package modset keeps the repository's Go modules one version set: versions.yaml lists the
// modules released together at one version and the modules that are never released
// (programs, tests, benchmarks, the generated distribution). It checks and rewrites the
// requirements between modules, names the release tags, and writes a file-based module proxy
// of the released modules from the working tree (for the outside-build test).
package modset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// File is the name of the version set file at the repository root.
const File = "versions.yaml"

// Set is versions.yaml: the released module sets and the modules never released.
type Set struct {
	ModuleSets map[string]ModuleSet `yaml:"module-sets"`
	Excluded   []string             `yaml:"excluded-modules"`
}

// ModuleSet is a group of modules released together at one version.
type ModuleSet struct {
	Version string   `yaml:"version"`
	Modules []string `yaml:"modules"`
}

// Repo is a repository checkout with its version set.
type Repo struct {
	Root string // repository root (the folder of versions.yaml)
	// Prefix is the root module's path; every module path is Prefix + "/" + its folder.
	Prefix string
	Set    Set
	// released maps a released module path to its version.
	released map[string]string
	// modFiles maps every go.mod of the tree (slash path relative to Root) to its module path.
	modFiles map[string]string
}

// Load reads versions.yaml and finds every go.mod under root.
func Load(root string) (*Repo, error) {
	data, err := os.ReadFile(filepath.Join(root, File))
	if err != nil {
		return nil, err
	}
	r := &Repo{Root: root, released: map[string]string{}, modFiles: map[string]string{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&r.Set); err != nil {
		return nil, fmt.Errorf("%s: %w", File, err)
	}
	for name, ms := range r.Set.ModuleSets {
		if !semver.IsValid(ms.Version) || semver.Canonical(ms.Version) != ms.Version {
			return nil, fmt.Errorf("%s: module set %s: version %q is not a semantic version (vX.Y.Z)", File, name, ms.Version)
		}
		if semver.Major(ms.Version) != "v0" && semver.Major(ms.Version) != "v1" {
			return nil, fmt.Errorf("%s: module set %s: version %s needs /vN module paths, which this repository does not use", File, name, ms.Version)
		}
		for _, m := range ms.Modules {
			if _, dup := r.released[m]; dup {
				return nil, fmt.Errorf("%s: module %s is listed twice", File, m)
			}
			r.released[m] = ms.Version
		}
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || rel == ".tools" || rel == "tmp" || rel == "bin" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(p) //nolint:gosec // the repository's own tree, walked by its maintainer
		if err != nil {
			return err
		}
		mp := modfile.ModulePath(data)
		if mp == "" {
			return fmt.Errorf("%s: no module line", rel)
		}
		r.modFiles[rel] = mp
		if rel == "go.mod" {
			r.Prefix = mp
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r.Prefix == "" {
		return nil, errors.New("no go.mod at the repository root")
	}
	return r, nil
}

// Released returns the released modules and their version, sorted by path.
func (r *Repo) Released() []module.Version {
	out := make([]module.Version, 0, len(r.released))
	for p, v := range r.released {
		out = append(out, module.Version{Path: p, Version: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Dir returns the folder (relative, slash-separated) of a module of this repository.
func (r *Repo) Dir(modPath string) string {
	if modPath == r.Prefix {
		return "."
	}
	return strings.TrimPrefix(modPath, r.Prefix+"/")
}

// Tag returns the release tag of a released module: <module folder>/<version>.
func (r *Repo) Tag(m module.Version) string {
	return r.Dir(m.Path) + "/" + m.Version
}

func (r *Repo) ours(p string) bool { return p == r.Prefix || strings.HasPrefix(p, r.Prefix+"/") }

// Check returns every way the tree disagrees with versions.yaml: a go.mod not listed or a
// listed module without go.mod, a module path that is not its folder, a requirement on a
// released module at another version, a released module requiring a module that is never
// released (a test server, a launcher, a benchmark), and a builder configuration naming one of
// our modules at another version.
func (r *Repo) Check() []string {
	var problems []string
	listed := map[string]bool{}
	for p := range r.released {
		listed[p] = true
	}
	for _, p := range r.Set.Excluded {
		if listed[p] {
			problems = append(problems, fmt.Sprintf("%s: %s is both released and excluded", File, p))
		}
		listed[p] = true
	}
	present := map[string]bool{}
	for _, rel := range sortedKeys(r.modFiles) {
		mp := r.modFiles[rel]
		present[mp] = true
		if !listed[mp] {
			problems = append(problems, fmt.Sprintf("%s: module %s is neither in a module set nor excluded in %s", rel, mp, File))
		}
		if want := path.Join(r.Prefix, path.Dir(rel)); mp != want && rel != "go.mod" {
			problems = append(problems, fmt.Sprintf("%s: module path %s, want %s (the folder)", rel, mp, want))
		}
	}
	for _, p := range sortedKeys(listed) {
		if !present[p] {
			problems = append(problems, fmt.Sprintf("%s: %s has no go.mod in the tree", File, p))
		}
	}
	for _, rel := range sortedKeys(r.modFiles) {
		f, err := r.parse(rel)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		_, releasedSelf := r.released[f.Module.Mod.Path]
		for _, req := range f.Require {
			if !r.ours(req.Mod.Path) {
				continue
			}
			if v, ok := r.released[req.Mod.Path]; ok && req.Mod.Version != v {
				problems = append(problems, fmt.Sprintf("%s: requires %s %s, the version set says %s (make versions)", rel, req.Mod.Path, req.Mod.Version, v))
			}
			if _, ok := r.released[req.Mod.Path]; releasedSelf && !ok {
				problems = append(problems, fmt.Sprintf("%s: released module %s requires %s, which is never released (move the tests that need it to a testbed module)", rel, f.Module.Mod.Path, req.Mod.Path))
			}
		}
	}
	bcs, err := r.builderConfigs()
	if err != nil {
		return append(problems, err.Error())
	}
	for _, bc := range bcs {
		data, err := os.ReadFile(filepath.Join(r.Root, bc))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, m := range gomodLine.FindAllStringSubmatch(string(data), -1) {
			if v, ok := r.released[m[1]]; ok && m[2] != v {
				problems = append(problems, fmt.Sprintf("%s: gomod %s %s, the version set says %s (make versions)", bc, m[1], m[2], v))
			} else if !ok && r.ours(m[1]) {
				problems = append(problems, fmt.Sprintf("%s: gomod %s is never released", bc, m[1]))
			}
		}
	}
	return problems
}

// gomodLine matches a builder configuration's "gomod: <module> <version>".
var gomodLine = regexp.MustCompile(`(?m)gomod:\s*(\S+)\s+(v\S+)`)

func (r *Repo) builderConfigs() ([]string, error) {
	var out []string
	err := filepath.WalkDir(r.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.Root, p)
		if d.IsDir() && (rel == ".git" || rel == ".tools" || rel == "tmp" || rel == "bin") {
			return filepath.SkipDir
		}
		if !d.IsDir() && isBuilderConfig(d.Name()) {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// isBuilderConfig says whether a file is an ocb configuration: builder-config.yaml, or a named
// variant such as builder-config-node.yaml (the node agent's build).
func isBuilderConfig(name string) bool {
	return name == "builder-config.yaml" || (strings.HasPrefix(name, "builder-config-") && strings.HasSuffix(name, ".yaml"))
}

func (r *Repo) parse(rel string) (*modfile.File, error) {
	data, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(rel, data, nil)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Sync rewrites every requirement on a released module (in every go.mod, direct or indirect)
// and every version-qualified replace of one to the set's version, and the builder
// configurations' gomod lines likewise. It returns the files it changed.
func (r *Repo) Sync() ([]string, error) {
	var changed []string
	for _, rel := range sortedKeys(r.modFiles) {
		f, err := r.parse(rel)
		if err != nil {
			return changed, err
		}
		dirty := false
		for _, req := range f.Require {
			if v, ok := r.released[req.Mod.Path]; ok && req.Mod.Version != v {
				if err := f.AddRequire(req.Mod.Path, v); err != nil {
					return changed, err
				}
				dirty = true
			}
		}
		for _, rp := range slices.Clone(f.Replace) {
			rep := *rp // DropReplace clears the entry
			if v, ok := r.released[rep.Old.Path]; ok && rep.Old.Version != "" && rep.Old.Version != v {
				if err := f.DropReplace(rep.Old.Path, rep.Old.Version); err != nil {
					return changed, err
				}
				if err := f.AddReplace(rep.Old.Path, v, rep.New.Path, rep.New.Version); err != nil {
					return changed, err
				}
				dirty = true
			}
		}
		if !dirty {
			continue
		}
		f.Cleanup()
		out, err := f.Format()
		if err != nil {
			return changed, err
		}
		if err := os.WriteFile(filepath.Join(r.Root, filepath.FromSlash(rel)), out, 0o644); err != nil { //nolint:gosec // a committed source file, readable like the others
			return changed, err
		}
		changed = append(changed, rel)
	}
	bcs, err := r.builderConfigs()
	if err != nil {
		return changed, err
	}
	for _, bc := range bcs {
		p := filepath.Join(r.Root, bc)
		data, err := os.ReadFile(p)
		if err != nil {
			return changed, err
		}
		out := gomodLine.ReplaceAllStringFunc(string(data), func(s string) string {
			m := gomodLine.FindStringSubmatch(s)
			if v, ok := r.released[m[1]]; ok {
				return strings.Replace(s, m[2], v, 1)
			}
			return s
		})
		if out != string(data) {
			if err := os.WriteFile(p, []byte(out), 0o644); err != nil { //nolint:gosec // a committed source file, readable like the others
				return changed, err
			}
			changed = append(changed, bc)
		}
	}
	return changed, nil
}

// SetVersion changes the version of every module set in versions.yaml (the file's comments
// and layout are kept: only the version lines change).
func SetVersion(root, version string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("version %q is not vX.Y.Z", version)
	}
	p := filepath.Join(root, File)
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	re := regexp.MustCompile(`(?m)^(\s+version:\s*)v\S+`)
	if !re.Match(data) {
		return fmt.Errorf("%s: no version line", File)
	}
	return os.WriteFile(p, re.ReplaceAll(data, []byte("${1}"+version)), 0o644) //nolint:gosec // a committed source file, readable like the others
}

// WriteProxy writes a file-based Go module proxy (GOPROXY=file://dir) serving every released
// module at its version from the working tree: <module>/@v/list, <version>.info, .mod and .zip
// (the zip as `go mod download` would build it from a tagged commit: nested modules,
// vendor folders and version-control files left out).
func (r *Repo) WriteProxy(dir string, stamp time.Time) error {
	for _, m := range r.Released() {
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(vdir, 0o750); err != nil {
			return err
		}
		src := filepath.Join(r.Root, filepath.FromSlash(r.Dir(m.Path)))
		mod, err := os.ReadFile(filepath.Join(src, "go.mod"))
		if err != nil {
			return err
		}
		info, err := json.Marshal(struct {
			Version string
			Time    time.Time
		}{m.Version, stamp.UTC()})
		if err != nil {
			return err
		}
		zf, err := os.Create(filepath.Join(vdir, m.Version+".zip"))
		if err != nil {
			return err
		}
		err = modzip.CreateFromDir(zf, m, src)
		if cerr := zf.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("zip %s: %w", m.Path, err)
		}
		for name, data := range map[string][]byte{
			"list":              []byte(m.Version + "\n"),
			m.Version + ".info": info,
			m.Version + ".mod":  mod,
		} {
			if err := os.WriteFile(filepath.Join(vdir, name), data, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
