// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/modfile"
)

// nodeBuildGoMod is the go.mod of the node agent's generated distribution.
const nodeBuildGoMod = "cmd/otelcol-k8s-node/go.mod"

// TestRootModuleOnNodeBuildVersions: `make run` builds the node agent first and then
// testbed/cmd/runlocal from the root module. The packages both use (client-go, pdata, grpc,
// x/net, ...) compile once only when the root module requires the versions the node build
// does; with other versions a cold `make run` compiles them twice (about 290 CPU-seconds more).
// A dependency bump in one go.mod must therefore be made in the other too.
func TestRootModuleOnNodeBuildVersions(t *testing.T) {
	root, _ := trackedFiles(t)
	rootReq := requiredVersions(t, filepath.Join(root, "go.mod"))
	nodeReq := requiredVersions(t, filepath.Join(root, nodeBuildGoMod))
	shared := 0
	for mod, v := range rootReq {
		nv, ok := nodeReq[mod]
		if !ok {
			continue
		}
		shared++
		if v != nv {
			t.Errorf("go.mod requires %s %s, %s requires %s: make them equal", mod, v, nodeBuildGoMod, nv)
		}
	}
	if shared < 10 {
		t.Errorf("the root module and the node build share %d requirements; expected the collector's core and client-go among them", shared)
	}
}

// requiredVersions reads the module versions a go.mod requires.
func requiredVersions(t *testing.T, file string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.ParseLax(file, raw, nil)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out := map[string]string{}
	for _, r := range mf.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	return out
}
