// SPDX-License-Identifier: Apache-2.0

package install

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/install/internal/testenv"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// IAMDir holds the policy documents, relative to the repository root.
const IAMDir = "deploy/iam"

// policyActions returns the actions of a policy document of deploy/iam, by statement Sid.
func policyActions(t *testing.T, file string) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, IAMDir, file))
	require.NoError(t, err)
	var doc struct {
		Statement []struct {
			Sid    string
			Effect string
			Action []string
		}
	}
	require.NoError(t, json.Unmarshal(raw, &doc), file)
	out := map[string][]string{}
	for _, s := range doc.Statement {
		require.Equal(t, "Allow", s.Effect, file)
		out[s.Sid] = append(out[s.Sid], s.Action...)
	}
	return out
}

func union(by map[string][]string, sids ...string) []string {
	var out []string
	for sid, acts := range by {
		if len(sids) == 0 || slices.Contains(sids, sid) {
			out = append(out, acts...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestIAMPoliciesMatchExporterCalls runs the node agent's collector configuration, rendered by
// the chart for each combination below, against the local CloudWatch Logs server with real
// log lines, records every CloudWatch Logs operation the exporter calls, and checks that the
// policy documents of deploy/iam the README tells users to attach for that combination grant
// exactly the IAM actions those calls need: none missing, none never used.
func TestIAMPoliciesMatchExporterCalls(t *testing.T) {
	bin := testenv.Path(t, "OTELCOL_K8S_BIN", "run through `make test-modules` (it builds bin/otelcol-k8s)")
	node := policyActions(t, "node-policy.json")
	tags := policyActions(t, "tags-policy.json")
	events := policyActions(t, "events-policy.json")
	// The events collector runs the same exporter with the same settings shape (values.yaml
	// logGroups applies to both), on its own groups: the same actions on other resources.
	assert.Equal(t, union(node), union(events), "events-policy.json grants the node policy's actions on the events groups")

	for _, tc := range []struct {
		name   string
		values string
		// granted is what the README says to attach for these values.
		granted []string
	}{
		{"defaults (retention 30 days)", "", union(node)},
		{"retention left as is", "logGroups: {retentionDays: 0}", union(node, "WriteClusterLogGroups")},
		{"group tags", "logGroups: {tags: {team: logs}}", union(map[string][]string{"n": union(node), "t": union(tags)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			used := runNodeAgent(t, bin, with(t, tc.values))
			assert.Equal(t, tc.granted, used, "IAM actions granted (left) and needed by the calls made (right)")
		})
	}
}

// iamActions maps a CloudWatch Logs operation to the IAM actions it needs. CreateLogGroup with
// tags also needs logs:TagResource (AWS authorizes the tags of a new group through it).
func iamActions(op string, withTags bool) []string {
	if op == "CreateLogGroup" && withTags {
		return []string{"logs:CreateLogGroup", "logs:TagResource"}
	}
	return []string{"logs:" + op}
}

// runNodeAgent renders the chart with vals, runs the node agent's configuration (localized by
// the e2e loader) on a node directory with a few pods' log lines, waits until every line is
// delivered and the group settings are applied, and returns the IAM actions of every operation
// the exporter called.
func runNodeAgent(t *testing.T, bin string, vals map[string]any) []string {
	t.Helper()
	srv := localcloudwatch.New(localcloudwatch.Config{})
	endpoint, err := srv.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	a := startNodeAgent(t, bin, vals, endpoint, nil)

	const lines = 20
	writePodLogs(t, a.nodeRoot, lines)
	_, withTags := dig(vals, "logGroups", "tags").(map[string]any)
	retention, _ := dig(vals, "logGroups", "retentionDays").(float64)
	wantSettings := withTags || dig(vals, "logGroups", "retentionDays") == nil || retention != 0
	delivered := assert.Eventually(t, func() bool {
		st := srv.Stats()
		settled := !wantSettings || st.Requests["DescribeLogGroups"] >= 2
		return countEvents(srv) == 2*lines && settled
	}, 90*time.Second, 200*time.Millisecond)
	if !delivered {
		t.Fatalf("not every line delivered or settings not applied: %+v\n%s", srv.Stats(), a.logTail())
	}
	require.NoError(t, a.col.Stop(30*time.Second))

	var used []string
	for op, n := range srv.Stats().Requests {
		if n > 0 {
			used = append(used, iamActions(op, withTags)...)
		}
	}
	slices.Sort(used)
	return slices.Compact(used)
}

// nodeAgent is a node agent started by startNodeAgent.
type nodeAgent struct {
	col      *harness.Collector
	nodeRoot string
	logPath  string
}

func (a nodeAgent) logTail() string { b, _ := os.ReadFile(a.logPath); return string(b) }

// startNodeAgent renders the chart with vals and starts the node agent's configuration
// (localized by the e2e loader) with the CloudWatch endpoint set to endpoint, or, when endpoint
// is empty, with no endpoint in the configuration (the SDK's own resolution decides); env is
// added to the environment. It returns once the collector is healthy.
func startNodeAgent(t *testing.T, bin string, vals map[string]any, endpoint string, env map[string]string) nodeAgent {
	t.Helper()
	dir := t.TempDir()
	cmPath := filepath.Join(dir, "configmap.yaml")
	require.NoError(t, os.WriteFile(cmPath, []byte(render(t, vals)["configmap.yaml"]), 0o600))
	health := freeAddr(t)
	localEndpoint := endpoint
	if localEndpoint == "" {
		localEndpoint = "http://127.0.0.1:1" // replaced below: the loader requires one
	}
	shipped, err := harness.LoadShippedNodeConfig(cmPath, harness.Local{
		NodeRoot: filepath.Join(dir, "node"), StateDir: filepath.Join(dir, "state"),
		Endpoint: localEndpoint, HealthAddr: health,
		Env: map[string]string{
			"K8S_NODE_NAME": "node-1", "CLUSTER_NAME": "iam", "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_EC2_METADATA_DISABLED": "true",
		},
	})
	require.NoError(t, err)
	if endpoint == "" {
		var cfg map[string]any
		require.NoError(t, yamlv3.Unmarshal(shipped.YAML, &cfg))
		exp, ok := dig(cfg, "exporters", "cloudwatch_groups").(map[string]any)
		require.True(t, ok, "the node configuration has a cloudwatch_groups exporter")
		delete(exp, "endpoint")
		shipped.YAML, err = yamlv3.Marshal(cfg)
		require.NoError(t, err)
	}
	config, err := shipped.WriteShippedNodeConfig(dir)
	require.NoError(t, err)
	procEnv := slices.Clone(shipped.Env)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		procEnv = append(procEnv, k+"="+env[k])
	}
	a := nodeAgent{nodeRoot: filepath.Join(dir, "node"), logPath: filepath.Join(dir, "collector.log")}
	a.col, err = harness.StartCollector(bin, config, procEnv, a.logPath)
	require.NoError(t, err)
	t.Cleanup(a.col.Kill)
	require.Eventually(t, func() bool {
		r, err := http.Get("http://" + health + "/") //nolint:noctx // a probe of a local port
		if err != nil {
			return false
		}
		_ = r.Body.Close()
		return r.StatusCode == http.StatusOK
	}, 60*time.Second, 100*time.Millisecond, "the collector is not healthy:\n%s", a.logTail())
	return a
}

// writePodLogs writes lines numbered log lines for each of two pods in two namespaces (two
// groups, two streams each) under the node root.
func writePodLogs(t *testing.T, nodeRoot string, lines int) {
	t.Helper()
	for _, p := range []string{"default_web_11111111-1111-1111-1111-111111111111", "shop_api_22222222-2222-2222-2222-222222222222"} {
		d := filepath.Join(nodeRoot, "var", "log", "pods", p, "app")
		require.NoError(t, os.MkdirAll(d, 0o755))
		var b strings.Builder
		for i := range lines {
			fmt.Fprintf(&b, "%s stdout F line %d of %s\n", time.Now().UTC().Format(time.RFC3339Nano), i, p)
		}
		require.NoError(t, os.WriteFile(filepath.Join(d, "0.log"), []byte(b.String()), 0o600))
	}
}

// countEvents returns the number of events the local server holds.
func countEvents(srv *localcloudwatch.Server) int {
	n := 0
	for _, g := range srv.Groups() {
		streams, _ := srv.Streams(g.Name)
		for _, s := range streams {
			ev, _ := srv.Events(g.Name, s.Name)
			n += len(ev)
		}
	}
	return n
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = ln.Close() }() // only probing for a free port
	return ln.Addr().String()
}

// TestUpgradeReachesExistingGroups is a `helm upgrade` that changes the group settings: a node
// agent with the defaults writes its groups, then one rendered with another retention, a KMS
// key and tags writes to the same groups; the groups end with the new settings, and the calls
// made for them are granted by the policies the README names for those values (node, tags, kms).
func TestUpgradeReachesExistingGroups(t *testing.T) {
	bin := testenv.Path(t, "OTELCOL_K8S_BIN", "run through `make test-modules` (it builds bin/otelcol-k8s)")
	srv := localcloudwatch.New(localcloudwatch.Config{})
	endpoint, err := srv.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })

	first := startNodeAgent(t, bin, baseValues(), endpoint, nil)
	writePodLogs(t, first.nodeRoot, 5)
	require.Eventually(t, func() bool { return countEvents(srv) == 10 }, 60*time.Second, 100*time.Millisecond)
	require.NoError(t, first.col.Stop(30*time.Second))
	groups := srv.Groups()
	require.Len(t, groups, 2)
	for _, g := range groups {
		require.EqualValues(t, 30, g.RetentionDays)
		require.Empty(t, g.KMSKeyID)
	}
	before := srv.Stats().Requests

	const key = "arn:aws:kms:us-east-1:123456789012:key/k"
	upgraded := startNodeAgent(t, bin, with(t, `logGroups: {retentionDays: 7, kmsKeyArn: "`+key+`", tags: {team: logs}}`), endpoint, nil)
	writePodLogs(t, upgraded.nodeRoot, 5)
	settled := assert.Eventually(t, func() bool {
		if countEvents(srv) != 20 {
			return false
		}
		for _, g := range srv.Groups() {
			if g.RetentionDays != 7 || g.KMSKeyID != key || g.Tags["team"] != "logs" {
				return false
			}
		}
		return true
	}, 90*time.Second, 200*time.Millisecond, "the existing groups did not get the new settings")
	if !settled {
		t.Fatalf("%+v\n%s", srv.Groups(), upgraded.logTail())
	}
	require.NoError(t, upgraded.col.Stop(30*time.Second))

	var used []string
	for op, n := range srv.Stats().Requests {
		if n > before[op] {
			used = append(used, iamActions(op, true)...)
		}
	}
	granted := union(map[string][]string{
		"n": union(policyActions(t, "node-policy.json")), "t": union(policyActions(t, "tags-policy.json")),
		"k": union(policyActions(t, "kms-policy.json")),
	})
	for _, a := range used {
		assert.Contains(t, granted, a, "the upgrade's calls need %s", a)
	}
	assert.Contains(t, used, "logs:AssociateKmsKey", "kms-policy.json is needed for existing groups")
}

// iamVariables are the placeholders the README's envsubst step fills in the documents.
var iamVariables = []string{"AWS_PARTITION", "AWS_REGION", "AWS_ACCOUNT_ID", "CLUSTER_NAME", "NAMESPACE", "SERVICE_ACCOUNT", "OIDC_PROVIDER"}

// TestIAMDocumentsAreParameterized checks that no document of deploy/iam names a partition, a
// Region, an account or a namespace: each ARN's partition is ${AWS_PARTITION}, every
// placeholder is one the README's steps set, and each document is valid JSON once filled (for
// another partition and namespace than the usual ones).
func TestIAMDocumentsAreParameterized(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, IAMDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	placeholder := regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	fill := map[string]string{
		"AWS_PARTITION": "aws-cn", "AWS_REGION": "cn-north-1", "AWS_ACCOUNT_ID": "123456789012", "CLUSTER_NAME": "c",
		"NAMESPACE": "logging", "SERVICE_ACCOUNT": "sa", "OIDC_PROVIDER": "oidc.eks.cn-north-1.amazonaws.com.cn/id/X",
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			text := string(raw)
			assert.NotRegexp(t, `arn:aws[a-z-]*:`, text, "a hard-coded partition")
			assert.NotContains(t, text, "serviceaccount:otelcol-k8s:", "a hard-coded namespace")
			for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
				assert.Contains(t, iamVariables, m[1])
				assert.Regexp(t, `\b`+m[1]+`=`, string(readme), "the README sets %s before envsubst", m[1])
			}
			filled := placeholder.ReplaceAllStringFunc(text, func(s string) string { return fill[placeholder.FindStringSubmatch(s)[1]] })
			var doc map[string]any
			require.NoError(t, json.Unmarshal([]byte(filled), &doc))
			if strings.Contains(text, "arn:") {
				assert.Contains(t, filled, "arn:aws-cn:")
			}
		})
	}
}
