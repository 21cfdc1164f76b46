// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// nodeDistribution is the node agent's build (builder-config-node.yaml), compiled by every
// cold `make run` before the node's first report.
const nodeDistribution = "cmd/otelcol-k8s-node"

// nodeAPIGroups are the only k8s.io/api packages the node build may link: what its components
// read (Pods, the owners' apps/v1 kinds, the Lease). internal/kubeclient's scheme holds these.
var nodeAPIGroups = []string{"k8s.io/api/apps/v1", "k8s.io/api/coordination/v1", "k8s.io/api/core/v1"}

// nodeForbiddenPrefixes are client-go packages that register or wrap every API group of
// Kubernetes: the clientset and its typed clients (through their shared scheme), the informer
// factory, listers, apply configurations, and client-go's leader election (it imports the
// clientset and the informers). Compiling them cold costs several CPU-minutes.
var nodeForbiddenPrefixes = []string{
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/informers",
	"k8s.io/client-go/listers",
	"k8s.io/client-go/applyconfigurations",
	"k8s.io/client-go/tools/leaderelection",
}

// TestNodeBuildDependencies keeps the node build's dependency graph free of the full clientset,
// the informers and every k8s.io/api group it does not read (`go list -deps`, no compilation).
func TestNodeBuildDependencies(t *testing.T) {
	root, _ := trackedFiles(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = filepath.Join(root, nodeDistribution)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps in %s: %v\n%s", nodeDistribution, err, stderr)
	}
	for _, msg := range nodeDepViolations(string(out)) {
		t.Error(msg)
	}
}

// nodeDepViolations reads `go list -deps` lines (a package, then its imports) and names each
// package not allowed in the node build with a package of the build that imports it.
func nodeDepViolations(list string) []string {
	importers := map[string]string{} // package -> one importer
	var pkgs []string
	for _, line := range strings.Split(list, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkgs = append(pkgs, fields[0])
		for _, imp := range fields[1:] {
			if _, ok := importers[imp]; !ok {
				importers[imp] = fields[0]
			}
		}
	}
	var bad []string
	for _, p := range pkgs {
		var why string
		switch {
		case strings.HasPrefix(p, "k8s.io/api/") && !slices.Contains(nodeAPIGroups, p):
			why = "an API group the node build does not read (allowed: " + strings.Join(nodeAPIGroups, ", ") + ")"
		default:
			for _, prefix := range nodeForbiddenPrefixes {
				if p == prefix || strings.HasPrefix(p, prefix+"/") {
					why = "links every API group; use internal/kubeclient's REST clients"
				}
			}
		}
		if why != "" {
			bad = append(bad, nodeDistribution+" links "+p+" (imported by "+importers[p]+"): "+why)
		}
	}
	return bad
}

func TestNodeDepViolations(t *testing.T) {
	cases := []struct {
		name string
		list string
		want []string
	}{
		{"allowed", "k8s.io/api/core/v1 k8s.io/apimachinery/pkg/runtime\nk8s.io/client-go/rest\nk8s.io/client-go/tools/cache k8s.io/api/core/v1\n", nil},
		{
			"clientset", "k8s.io/client-go/kubernetes k8s.io/api/batch/v1\nk8s.io/api/batch/v1\nour/receiver k8s.io/client-go/kubernetes\n",
			[]string{
				nodeDistribution + " links k8s.io/client-go/kubernetes (imported by our/receiver): links every API group; use internal/kubeclient's REST clients",
				nodeDistribution + " links k8s.io/api/batch/v1 (imported by k8s.io/client-go/kubernetes): an API group the node build does not read (allowed: k8s.io/api/apps/v1, k8s.io/api/coordination/v1, k8s.io/api/core/v1)",
			},
		},
		{"typed client", "k8s.io/client-go/kubernetes/typed/core/v1\n", []string{nodeDistribution + " links k8s.io/client-go/kubernetes/typed/core/v1 (imported by ): links every API group; use internal/kubeclient's REST clients"}},
		{"leader election", "k8s.io/client-go/tools/leaderelection/resourcelock\n", []string{nodeDistribution + " links k8s.io/client-go/tools/leaderelection/resourcelock (imported by ): links every API group; use internal/kubeclient's REST clients"}},
		{"similar name", "k8s.io/client-go/kubernetesfoo\nk8s.io/apimachinery/pkg/api/errors\n", nil},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got := nodeDepViolations(tt.list)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}
