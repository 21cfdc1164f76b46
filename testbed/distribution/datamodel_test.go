// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
)

// podLog is one container's log file in the /var/log/pods layout and the lines written to it.
type podLog struct {
	namespace, pod, uid, container string
	lines                          []string
}

// The corpus: Kubernetes components logging klog text and JSON, an application logging JSON of
// several kinds (zap production, a logger with ts and msg, logrus) and plain text, and a pod that
// logs every identity and routing key it can think of.
var dataModelCorpus = []podLog{
	{"kube-system", "kube-scheduler-node-1", "5b2c1f0e-8a7d-4c3e-9f21-0d6e4a1b7c90", "kube-scheduler", []string{
		`I1121 09:30:00.000000       1 schedule_one.go:314] "Successfully bound pod to node" pod="shop/cart-5c9f8b7d6-k8l2p" node="ip-10-0-1-23.ec2.internal" evaluatedNodes=6 feasibleNodes=3`,
		`I1121 09:30:00.100000       1 proxier.go:812] "Adding new service port" portName="default/kubernetes:https" servicePort="10.96.0.1:443/TCP"`,
		`E1121 09:30:00.200000       1 schedule_one.go:1004] "Error scheduling pod; retrying" err="0/3 nodes are available" pod="shop/cart-5c9f8b7d6-x9x9x"`,
	}},
	{"kube-system", "kube-controller-manager-node-1", "c1d2e3f4-0a1b-4c2d-8e3f-5a6b7c8d9e0f", "kube-controller-manager", []string{
		`{"ts":1795253400000.5,"caller":"deployment/deployment_controller.go:497","msg":"Started syncing deployment","v":4,"deployment":{"name":"web","namespace":"default"}}`,
		`{"ts":1795253400100.5,"caller":"garbagecollector/garbagecollector.go:545","msg":"Deleting object","v":2,"object":{"name":"web-5d","namespace":"default"},"kind":"ReplicaSet","objectUID":"0b1a2c3d-4e5f-6789-abcd-ef0123456789"}`,
	}},
	{"shop", "search-0", "0a4e7c2d-3b1f-4d5a-8e6c-9f2b1a0d3e47", "search", []string{
		`{"level":"info","ts":1795253400.5,"caller":"search/handler.go:88","msg":"query served","service":"search","node":"worker-7","pod":"prod/search-0"}`,
		`{"ts":1795253400.6,"msg":"reindex","service":"search","namespace":"prod","user":{"name":"alice","namespace":"team-a"}}`,
		`{"level":"warning","msg":"slow query","time":"2026-11-21T09:30:00Z","node":"worker-7"}`,
		`GET /search?q=k8s.pod.name 200 12ms`,
	}},
	{"tenant-a", "noisy-0", "7e1f0c3a-5b2d-4c9e-8a1f-2d3c4b5a6978", "noisy", []string{
		`I1121 09:30:01.000000       1 main.go:1] "hello" k8s.namespace.uid="0d0c0b0a-0000-4000-8000-000000000001" otelcol_k8s.log.type="audit" log.type="audit" k8s.pod.name="victim" log.file.path="/var/log/pods/kube-system_x_1/x/0.log" otelcol_k8s.object.name="forged" pod="tenant-a/noisy-0"`,
	}},
}

// shippedNodeConfig returns the node agent's configuration from deploy/kubernetes/configmap.yaml
// as the e2e scenarios run it (harness.LoadShippedNodeConfig: only paths, addresses and the
// components that watch the cluster given its kubeconfig or left out), with the CloudWatch exporter replaced by a
// file exporter so the records' attributes can be read, and the environment it needs. With a
// kubeconfig, the components that watch the cluster (pod_metadata) use it; without, they are left
// out.
func shippedNodeConfig(t *testing.T, root, state, health, out, kubeconfig string) (path string, env []string) {
	t.Helper()
	return shippedNodeConfigFrom(t, harness.ShippedNodeConfigMap, out, harness.Local{
		NodeRoot: root, StateDir: state, Endpoint: "http://127.0.0.1:1", HealthAddr: health, Kubeconfig: kubeconfig,
		Env: map[string]string{"AWS_REGION": "eu-west-1", "K8S_NODE_NAME": "node-1", "CLUSTER_NAME": "test"},
	})
}

// shippedNodeConfigFrom is shippedNodeConfig for the ConfigMap configMap (relative to the
// repository root) localized with l.
func shippedNodeConfigFrom(t *testing.T, configMap, out string, l harness.Local) (path string, env []string) {
	t.Helper()
	sh, err := harness.LoadShippedNodeConfig(filepath.Join(repoRoot, configMap), l)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(sh.YAML, &cfg); err != nil {
		t.Fatal(err)
	}
	exporters, _ := cfg["exporters"].(map[string]any)
	for id := range exporters {
		if id == "cloudwatch_groups" || strings.HasPrefix(id, "cloudwatch_groups/") {
			delete(exporters, id) // the traces pipeline's exporters stay
		}
	}
	exporters["file"] = map[string]any{"path": out, "flush_interval": "100ms"}
	service, _ := cfg["service"].(map[string]any)
	pipelines, _ := service["pipelines"].(map[string]any)
	logs, ok := pipelines["logs"].(map[string]any)
	if !ok {
		t.Fatal("the shipped configuration has no logs pipeline")
	}
	logs["exporters"] = []string{"file"}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, sh.Env
}

// startCollector runs bin with the configuration at cfg and the environment env (at most two
// minutes), waits until its health check at health answers, and stops it (interrupt) when the
// test ends, logging its output if the test failed.
func startCollector(t *testing.T, bin, cfg string, env []string, health string) {
	t.Helper()
	runCollector(t, bin, cfg, env, health)
}

// waitHealthy waits until the collector's health check answers: its pipeline runs and
// cri_log's first discovery (where the shipped start_at: end applies) is done.
func waitHealthy(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/") //nolint:noctx // a local probe in a deadline loop
		if err == nil {
			_ = resp.Body.Close() // only the status matters
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatal("the collector's health check did not answer")
}

// fullRecord is one exported record with every attribute, whatever its type.
type fullRecord struct {
	Body     string
	Severity string
	TraceID  string // hex, empty without one
	Resource map[string]json.RawMessage
	Attrs    map[string]json.RawMessage
}

func readFullRecords(t *testing.T, path string) []fullRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }() // read-only
	type kv struct {
		Key   string          `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	toMap := func(kvs []kv) map[string]json.RawMessage {
		m := make(map[string]json.RawMessage, len(kvs))
		for _, e := range kvs {
			m[e.Key] = e.Value
		}
		return m
	}
	var out []fullRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var req struct {
			ResourceLogs []struct {
				Resource struct {
					Attributes []kv `json:"attributes"`
				} `json:"resource"`
				ScopeLogs []struct {
					LogRecords []struct {
						SeverityText string `json:"severityText"`
						TraceID      string `json:"traceId"`
						Body         struct {
							StringValue string `json:"stringValue"`
						} `json:"body"`
						Attributes []kv `json:"attributes"`
					} `json:"logRecords"`
				} `json:"scopeLogs"`
			} `json:"resourceLogs"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			break // mid-write; the next poll reads the whole line
		}
		for _, rl := range req.ResourceLogs {
			res := toMap(rl.Resource.Attributes)
			for _, sl := range rl.ScopeLogs {
				for _, lr := range sl.LogRecords {
					out = append(out, fullRecord{Body: lr.Body.StringValue, Severity: lr.SeverityText, TraceID: lr.TraceID, Resource: res, Attrs: toMap(lr.Attributes)})
				}
			}
		}
	}
	return out
}

func str(raw json.RawMessage) string {
	var v struct {
		StringValue string `json:"stringValue"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.StringValue
}

// TestShippedPipelineDataModel runs the shipped node pipeline (deploy/kubernetes, its receiver
// and processor settings) on the corpus above and checks the project's data model on what comes
// out: every reserved attribute name is registered, no record attribute carries a resource
// identity name, application logs come out byte for byte as written, Kubernetes components'
// references name their objects under otelcol_k8s.object.*, and no log content writes an
// identity or routing attribute.
func TestShippedPipelineDataModel(t *testing.T) {
	bin := binary(t)
	root, state := t.TempDir(), t.TempDir()
	out := filepath.Join(t.TempDir(), "records.jsonl")
	health := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg, env := shippedNodeConfig(t, root, state, health, out, "")
	startCollector(t, bin, cfg, env, health)

	// The pods start after the collector, as new containers do (the shipped start_at: end
	// reads them from their first line).
	want := 0
	base := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	for _, p := range dataModelCorpus {
		dir := filepath.Join(root, "var/log/pods", p.namespace+"_"+p.pod+"_"+p.uid, p.container)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, l := range p.lines {
			fmt.Fprintf(&b, "%s stdout F %s\n", base.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), l)
			want++
		}
		if err := os.WriteFile(filepath.Join(dir, "0.log"), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var recs []fullRecord
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if recs = readFullRecords(t, out); len(recs) >= want {
			break
		}
	}
	if len(recs) != want {
		for _, r := range recs {
			t.Logf("record: %q", r.Body)
		}
		t.Fatalf("got %d records, want %d", len(recs), want)
	}

	byBody := map[string]fullRecord{}
	for _, r := range recs {
		byBody[r.Body] = r
		for k := range r.Resource {
			if attr.Reserved(k) && !attr.RegisteredOrFamily(k) {
				t.Errorf("resource attribute %s is in a reserved namespace but not registered", k)
			}
		}
		for k := range r.Attrs {
			if attr.Reserved(k) && !attr.RegisteredOrFamily(k) {
				t.Errorf("record attribute %s (of %q) is in a reserved namespace but not registered", k, r.Body)
			}
			if e, ok := attr.Lookup(k); ok && e.Place == attr.Resource {
				t.Errorf("record attribute %s (of %q) is a resource attribute's name", k, r.Body)
			}
			if strings.HasPrefix(k, "k8s.") {
				t.Errorf("record attribute %s (of %q) is a Kubernetes identity name", k, r.Body)
			}
		}
	}

	// Application logs come out exactly as written, with only the receiver's stream attribute.
	for _, line := range dataModelCorpus[2].lines {
		r, ok := byBody[line]
		if !ok {
			t.Errorf("application line changed or lost: %s", line)
			continue
		}
		for k := range r.Attrs {
			if k != attr.LogIOStream {
				t.Errorf("application line got attribute %s: %s", k, line)
			}
		}
		if str(r.Resource[attr.K8sPodName]) != "search-0" || str(r.Resource[attr.K8sNamespaceName]) != "shop" {
			t.Errorf("application line resource = %v", r.Resource)
		}
	}

	// Kubernetes components' references name their objects.
	bind := byBody["Successfully bound pod to node"]
	if got := [3]string{str(bind.Attrs[attr.ObjectKind]), str(bind.Attrs[attr.ObjectNamespace]), str(bind.Attrs[attr.ObjectName])}; got != [3]string{"Pod", "shop", "cart-5c9f8b7d6-k8l2p"} {
		t.Errorf("bind line subject = %v", got)
	}
	if refs := string(bind.Attrs[attr.ObjectRefs]); !strings.Contains(refs, `"Node/ip-10-0-1-23.ec2.internal"`) {
		t.Errorf("bind line refs = %s", refs)
	}
	if r := byBody["Adding new service port"]; str(r.Attrs[attr.ObjectKind]) != "Service" || str(r.Attrs[attr.ObjectName]) != "kubernetes" {
		t.Errorf("kube-proxy service port: %v", r.Attrs)
	}
	if r := byBody["Deleting object"]; str(r.Attrs[attr.ObjectKind]) != "ReplicaSet" || str(r.Attrs[attr.ObjectUID]) != "0b1a2c3d-4e5f-6789-abcd-ef0123456789" {
		t.Errorf("garbage collector line: %v", r.Attrs)
	}
	if r := byBody["Started syncing deployment"]; str(r.Attrs[attr.ObjectAPIVersion]) != "apps/v1" {
		t.Errorf("deployment line: %v", r.Attrs)
	}

	// A pod logging identity and routing keys changes neither: its keys are renamed, its own
	// reference to itself is its subject, and the resource still says it wrote the line.
	noisy := byBody["hello"]
	if str(noisy.Resource[attr.K8sPodName]) != "noisy-0" || str(noisy.Resource[attr.K8sNamespaceName]) != "tenant-a" {
		t.Errorf("noisy pod resource = %v", noisy.Resource)
	}
	for _, k := range []string{"k8s.namespace.uid", "otelcol_k8s.log.type", "log.type", "k8s.pod.name", "log.file.path"} {
		if _, ok := noisy.Attrs[k]; ok {
			t.Errorf("log content wrote %s", k)
		}
		if _, ok := noisy.Attrs[attr.KlogPairPrefix+k]; !ok {
			t.Errorf("the pair %s is not kept under %s", k, attr.KlogPairPrefix+k)
		}
	}
	if str(noisy.Attrs[attr.ObjectName]) != "noisy-0" {
		t.Errorf("noisy pod subject = %s, want its own pod reference, not the forged one", str(noisy.Attrs[attr.ObjectName]))
	}
}
