// SPDX-License-Identifier: Apache-2.0

package outsidebuild

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"

	"github.com/otelcol-k8s/otelcol-k8s/internal/modset"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// envBuilder names ocb (`make test-modules` sets it to .tools/bin/builder).
const envBuilder = "OTELCOL_K8S_BUILDER"

// imported are the components of this repository the test requires in the outside build by
// module path and version (it takes every component of builder-config.yaml, these included).
var imported = []string{
	"receiver/crilogreceiver",
	"processor/klogparserprocessor",
	"processor/objectrefprocessor",
	"exporter/cloudwatchgroupsexporter",
}

// TestOutsideBuildFromVersionedModules is a collector build somewhere else: the repository's
// released modules are served at their release version by a file-based module proxy made from
// the working tree, ocb builds a configuration that names cri_log, klog_parser, object_ref and
// cloudwatch_groups (and the repository's other components) by module path and version only
// (no replace, no path) beside upstream components, and the binary runs the shipped node configuration on a tiny node into the local
// CloudWatch Logs server: every line arrives, klog parsed, object references named.
func TestOutsideBuildFromVersionedModules(t *testing.T) {
	builder := os.Getenv(envBuilder)
	if builder == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set (make test-modules sets it)", envBuilder)
		}
		t.Skipf("%s is not set: run through make test-modules", envBuilder)
	}
	start := time.Now()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	repo, err := modset.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if problems := repo.Check(); len(problems) > 0 {
		t.Fatalf("the modules disagree with %s:\n%s", modset.File, strings.Join(problems, "\n"))
	}
	proxy := t.TempDir()
	if err := repo.WriteProxy(proxy, time.Now()); err != nil {
		t.Fatal(err)
	}
	version := repo.Released()[0].Version

	work := t.TempDir()
	dist := filepath.Join(work, "dist")
	writeFile(t, filepath.Join(work, "builder-config.yaml"), builderConfig(t, root, repo.Prefix, version, dist))
	env := goEnv(t, root, proxy, filepath.Join(work, "modcache"))

	run(t, work, env, builder, "--config", filepath.Join(work, "builder-config.yaml"), "--skip-compilation")
	assertVersionedOnly(t, filepath.Join(dist, "go.mod"), repo.Prefix, version)
	bin := filepath.Join(work, "otelcol-outside")
	run(t, dist, append(env, "CGO_ENABLED=0"), "go", "build", "-trimpath", "-o", bin, ".")
	t.Logf("outside build from versioned modules in %s", time.Since(start).Round(time.Second))

	runTinyNode(t, root, bin)
}

// builderConfig is the distribution's builder-config.yaml as a build elsewhere would write
// it: every component by module path and version, no path and no replaces, in another module
// and output folder. The same upstream components keep the module graph (and so the build
// cache) the distribution's; what the test adds is only our modules taken by version.
func builderConfig(t *testing.T, root, prefix, version, dist string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["dist"] = map[string]any{
		"name": "otelcol-outside", "description": "a collector built elsewhere from versioned modules",
		"output_path": dist, "module": "example.com/outside/otelcol", "version": "0.0.1",
	}
	delete(cfg, "replaces")
	names := map[string]bool{}
	for _, kind := range []string{"receivers", "processors", "exporters", "extensions", "connectors", "providers"} {
		list, _ := cfg[kind].([]any)
		for _, c := range list {
			m, ok := c.(map[string]any)
			if !ok {
				t.Fatalf("builder-config.yaml: %s entry %v", kind, c)
			}
			delete(m, "path")
			gomod, _ := m["gomod"].(string)
			if mod, v, _ := strings.Cut(gomod, " "); strings.HasPrefix(mod, prefix+"/") {
				if v != version {
					t.Fatalf("builder-config.yaml: %s at %s, the release is %s", mod, v, version)
				}
				names[strings.TrimPrefix(mod, prefix+"/")] = true
			}
		}
	}
	for _, dir := range imported {
		if !names[dir] {
			t.Fatalf("builder-config.yaml does not name %s", dir)
		}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// goEnv is the environment of a build elsewhere: our modules only from the proxy made from the
// working tree, everything else as this machine gets it (its module cache first, then its
// GOPROXY). The module cache is the test's own, so a cached copy of an earlier working tree at
// the same version is never used; the build cache is shared (-trimpath keys do not depend on
// where the modules are).
func goEnv(t *testing.T, root, proxy, modcache string) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOPROXY", "GOMODCACHE", "GOFLAGS").Output()
	if err != nil {
		t.Fatal(err)
	}
	vals := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	machineProxy, machineCache, flags := vals[0], vals[1], vals[2]
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	return []string{
		"GOPROXY=file://" + proxy + ",file://" + filepath.Join(machineCache, "cache", "download") + "," + machineProxy,
		"GOMODCACHE=" + modcache,
		"GONOSUMDB=" + repoPrefix(root),
		"GOFLAGS=" + strings.TrimSpace(flags+" -modcacherw"),
		// ocb's `go mod tidy` with -e (internal/buildtools/go): the module mirror refuses a few
		// test-only dependencies of contrib modules.
		"PATH=" + filepath.Join(root, "internal", "buildtools") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"REAL_GO=" + realGo,
	}
}

func repoPrefix(root string) string {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return ""
	}
	return modfile.ModulePath(data)
}

// assertVersionedOnly: the generated go.mod requires our modules at the release version and has
// no replace at all.
func assertVersionedOnly(t *testing.T, goMod, prefix, version string) {
	t.Helper()
	data, err := os.ReadFile(goMod)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(goMod, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Replace) > 0 {
		t.Errorf("the outside build's go.mod has replace lines:\n%s", data)
	}
	direct := map[string]string{}
	for _, r := range f.Require {
		if strings.HasPrefix(r.Mod.Path, prefix+"/") {
			if r.Mod.Version != version {
				t.Errorf("requires %s %s, want %s", r.Mod.Path, r.Mod.Version, version)
			}
			if strings.Contains(r.Mod.Path, "/testbed/") {
				t.Errorf("a test module reached the outside build: %s", r.Mod.Path)
			}
			direct[r.Mod.Path] = r.Mod.Version
		}
	}
	for _, dir := range imported {
		if _, ok := direct[prefix+"/"+dir]; !ok {
			t.Errorf("the outside build does not require %s/%s", prefix, dir)
		}
	}
}

func run(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A tiny node: an application container and a scheduler, in the kubelet's /var/log/pods
// layout, CRI format.
const (
	appLines   = 20
	schedPod   = "kube-system_kube-scheduler-node-1_0b6e0b6e-0000-4000-8000-000000000001"
	appPod     = "shop_web-1_0b6e0b6e-0000-4000-8000-000000000002"
	klogLine   = `I1124 12:00:00.000000       1 schedule_one.go:286] "Successfully bound pod to node" pod="shop/web-1" node="node-1" evaluatedNodes=3`
	klogBody   = "Successfully bound pod to node"
	appMessage = "order %d accepted"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func runTinyNode(t *testing.T, root, bin string) {
	t.Helper()
	node := t.TempDir()
	now := time.Now().UTC()
	var app strings.Builder
	for i := range appLines {
		fmt.Fprintf(&app, "%s stdout F "+appMessage+"\n", now.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), i)
	}
	if err := os.MkdirAll(filepath.Join(node, "var/log/pods"), 0o755); err != nil {
		t.Fatal(err)
	}

	srv := localcloudwatch.New(localcloudwatch.Config{Credentials: map[string]string{"AKIDOUTSIDE": "outside-secret"}})
	endpoint, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	health := freeAddr(t)
	shipped, err := harness.LoadShippedNodeConfig(filepath.Join(root, harness.ShippedNodeConfigMap), harness.Local{
		NodeRoot: node, StateDir: t.TempDir(), Endpoint: endpoint, HealthAddr: health,
		Env: map[string]string{
			"K8S_NODE_NAME": "node-1", "AWS_REGION": "us-east-1", "CLUSTER_NAME": "outside",
			"AWS_ACCESS_KEY_ID": "AKIDOUTSIDE", "AWS_SECRET_ACCESS_KEY": "outside-secret", "AWS_EC2_METADATA_DISABLED": "true",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, config, string(shipped.YAML))
	logPath := filepath.Join(t.TempDir(), "collector.log")
	c, err := harness.StartCollector(bin, config, shipped.Env, logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Stop(30 * time.Second); err != nil {
			t.Errorf("stop: %v", err)
		}
		if t.Failed() {
			log, _ := os.ReadFile(logPath)
			t.Logf("configuration (%s):\n%s\ncollector log:\n%s", strings.Join(shipped.Changes, "; "), shipped.YAML, log)
		}
	}()
	// The shipped cri_log starts at the end of the files its first discovery finds: the node's
	// containers write once the collector is ready.
	if err := harness.WaitHealthy(health, c, time.Minute); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(node, "var/log/pods", appPod, "web/0.log"), app.String())
	writeFile(t, filepath.Join(node, "var/log/pods", schedPod, "kube-scheduler/0.log"), now.Format(time.RFC3339Nano)+" stderr F "+klogLine+"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if n, err := harness.WaitStored(ctx, srv, appLines+1, c); err != nil {
		t.Fatalf("%d of %d lines arrived: %v", n, appLines+1, err)
	}

	var app2, sched []map[string]any
	for _, g := range srv.Groups() {
		streams, err := srv.Streams(g.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range streams {
			events, err := srv.Events(g.Name, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range events {
				var msg map[string]any
				if err := json.Unmarshal([]byte(e.Message), &msg); err != nil {
					t.Fatalf("%s/%s: %v: %s", g.Name, s.Name, err, e.Message)
				}
				if strings.Contains(s.Name, "kube-scheduler") {
					sched = append(sched, msg)
				} else {
					app2 = append(app2, msg)
				}
			}
		}
	}
	if len(app2) != appLines || len(sched) != 1 {
		t.Fatalf("stored %d application and %d scheduler events, want %d and 1", len(app2), len(sched), appLines)
	}
	for i, m := range app2 {
		if want := fmt.Sprintf(appMessage, i); m["body"] != want {
			t.Errorf("application event %d: body %v, want %q", i, m["body"], want)
		}
	}
	s := sched[0]
	attrs, _ := s["attributes"].(map[string]any)
	if s["body"] != klogBody || s["severity_text"] == "" || s["severity_text"] == nil {
		t.Errorf("klog_parser did not parse the scheduler line: %v", s)
	}
	if attrs["otelcol_k8s.object.name"] != "web-1" || attrs["otelcol_k8s.object.namespace"] != "shop" {
		t.Errorf("object_ref did not name the Pod the scheduler line binds: %v", attrs)
	}
}
