// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmePipelineIsShipped keeps the README's "Example pipeline" equal to the node agent's
// configuration as deploy/kubernetes/configmap.yaml ships it: the README says it is that file,
// so it is, key for key and comment for comment.
func TestReadmePipelineIsShipped(t *testing.T) {
	root, _ := trackedFiles(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := os.ReadFile(filepath.Join(root, "deploy", "kubernetes", "configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	shown := readmePipeline(string(readme))
	shipped := shippedNodeConfig(string(cm))
	if shown == "" || shipped == "" {
		t.Fatalf("found %d lines in the README's Example pipeline and %d in configmap.yaml's config.yaml",
			strings.Count(shown, "\n"), strings.Count(shipped, "\n"))
	}
	if shown != shipped {
		sl, pl := strings.Split(shown, "\n"), strings.Split(shipped, "\n")
		for i := 0; i < len(sl) || i < len(pl); i++ {
			var a, b string
			if i < len(sl) {
				a = sl[i]
			}
			if i < len(pl) {
				b = pl[i]
			}
			if a != b {
				t.Fatalf("README.md's Example pipeline differs from deploy/kubernetes/configmap.yaml at line %d:\nREADME:  %q\nshipped: %q\n(copy config.yaml's content, unindented, into the README)", i+1, a, b)
			}
		}
	}
}

// readmePipeline is the first yaml block after the README's "## Example pipeline" heading.
func readmePipeline(readme string) string {
	_, rest, ok := strings.Cut(readme, "\n## Example pipeline\n")
	if !ok {
		return ""
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	if !ok {
		return ""
	}
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		return ""
	}
	return block
}

// shippedNodeConfig is the node ConfigMap's config.yaml, without the block's indentation.
func shippedNodeConfig(cm string) string {
	_, rest, ok := strings.Cut(cm, "\n  config.yaml: |\n")
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(rest, "\n") {
		switch {
		case strings.HasPrefix(l, "    "):
			b.WriteString(l[4:])
		case strings.TrimSpace(l) == "":
			b.WriteString("\n")
		default:
			return strings.TrimRight(b.String(), "\n") + "\n"
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}
