// SPDX-License-Identifier: Apache-2.0

// Command modset keeps the modules of the repository one version set (versions.yaml):
//
//	modset check              fail when a go.mod or builder configuration disagrees with versions.yaml
//	modset sync               rewrite the requirements on released modules to the set's version
//	modset set-version vX.Y.Z change the set's version in versions.yaml, then sync
//	modset tag [-n]           create the release tags <module folder>/<version> at HEAD (never pushed)
//	modset proxy -out DIR     write a file-based module proxy of the released modules from the working tree
//
// Run from the repository root (or pass -root).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/internal/modset"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "modset:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("modset", flag.ContinueOnError)
	root := fs.String("root", ".", "repository root (the folder of versions.yaml)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: modset [-root DIR] check|sync|set-version VERSION|tag [-n]|proxy -out DIR")
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	if cmd == "set-version" {
		if len(rest) != 1 {
			return errors.New("usage: modset set-version vX.Y.Z")
		}
		if err := modset.SetVersion(*root, rest[0]); err != nil {
			return err
		}
		cmd, rest = "sync", nil
	}
	r, err := modset.Load(*root)
	if err != nil {
		return err
	}
	switch cmd {
	case "check":
		if problems := r.Check(); len(problems) > 0 {
			return fmt.Errorf("the modules disagree with %s:\n  %s", modset.File, strings.Join(problems, "\n  "))
		}
		_, _ = fmt.Fprintf(stdout, "%d released modules agree with %s\n", len(r.Released()), modset.File)
		return nil
	case "sync":
		changed, err := r.Sync()
		for _, f := range changed {
			_, _ = fmt.Fprintln(stdout, "updated", f)
		}
		return err
	case "tag":
		tfs := flag.NewFlagSet("tag", flag.ContinueOnError)
		dry := tfs.Bool("n", false, "print the tags without creating them")
		if err := tfs.Parse(rest); err != nil {
			return err
		}
		return tag(r, *dry, stdout)
	case "proxy":
		pfs := flag.NewFlagSet("proxy", flag.ContinueOnError)
		out := pfs.String("out", "", "folder to write the proxy into")
		if err := pfs.Parse(rest); err != nil {
			return err
		}
		if *out == "" {
			return errors.New("proxy: -out is required")
		}
		if err := r.WriteProxy(*out, time.Now()); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(stdout, "GOPROXY=file://%s serves %d modules\n", *out, len(r.Released()))
		return nil
	}
	return fmt.Errorf("unknown command %q", cmd)
}

// tag creates an annotated tag <module folder>/<version> at HEAD for every released module,
// after checking that the tree is committed, agrees with versions.yaml, and that no such tag
// exists yet. Nothing is pushed.
func tag(r *modset.Repo, dry bool, stdout io.Writer) error {
	if problems := r.Check(); len(problems) > 0 {
		return fmt.Errorf("the modules disagree with %s (make versions):\n  %s", modset.File, strings.Join(problems, "\n  "))
	}
	status, err := git(r.Root, "status", "--porcelain")
	if err != nil {
		return err
	}
	if status != "" && !dry {
		return fmt.Errorf("the working tree has uncommitted changes; commit them first:\n%s", status)
	}
	head, err := git(r.Root, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	var tags []string
	for _, m := range r.Released() {
		t := r.Tag(m)
		if _, err := git(r.Root, "rev-parse", "-q", "--verify", "refs/tags/"+t); err == nil {
			return fmt.Errorf("tag %s exists already: a released version is never moved", t)
		}
		tags = append(tags, t)
	}
	for i, t := range tags {
		if dry {
			_, _ = fmt.Fprintf(stdout, "would tag %s at %s\n", t, head)
			continue
		}
		m := r.Released()[i]
		if _, err := git(r.Root, "tag", "-a", t, "-m", m.Path+" "+m.Version, head); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(stdout, "tagged %s at %s\n", t, head)
	}
	if !dry {
		_, _ = fmt.Fprintf(stdout, "push with: git push origin %s\n", strings.Join(tags, " "))
	}
	return nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...) //nolint:gosec // git with this tool's own arguments (tag names from versions.yaml)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}
