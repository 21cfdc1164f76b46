// SPDX-License-Identifier: Apache-2.0

package install

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// root is the repository root, seen from this package.
var root = filepath.Join("..", "..")

// baseValues are the values every chart rendering of the tests starts from: the chart requires
// a cluster name and a region.
func baseValues() map[string]any {
	return map[string]any{"clusterName": "test-cluster", "aws": map[string]any{"region": "eu-west-1"}}
}

// with returns baseValues with the YAML of extra merged over it (maps merged, the rest
// replaced).
func with(t *testing.T, extra string) map[string]any {
	t.Helper()
	vals := baseValues()
	if extra == "" {
		return vals
	}
	var over map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(extra), &over))
	merge(vals, over)
	return vals
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// render renders the chart as the plain manifests' release with vals.
func render(t *testing.T, vals map[string]any) map[string]string {
	t.Helper()
	files, err := Render(filepath.Join(root, ChartDir), ReleaseName, ReleaseNamespace, vals)
	require.NoError(t, err)
	return files
}

// objects decodes every YAML document of files, in file name order.
func objects(t *testing.T, files map[string]string) []*unstructured.Unstructured {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*unstructured.Unstructured
	for _, n := range names {
		d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(files[n])), 4096)
		for {
			var m map[string]any
			err := d.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, n)
			if len(m) == 0 {
				continue
			}
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out
}

// find returns the object of kind and name, or nil.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// collectorConfig returns the config.yaml of the ConfigMap name, decoded.
func collectorConfig(t *testing.T, objs []*unstructured.Unstructured, name string) (string, map[string]any) {
	t.Helper()
	cm := find(objs, "ConfigMap", name)
	require.NotNil(t, cm, "ConfigMap %s", name)
	text, _, _ := unstructured.NestedString(cm.Object, "data", "config.yaml")
	var cfg map[string]any
	require.NoError(t, yamlv3.Unmarshal([]byte(text), &cfg))
	return text, cfg
}

// containerEnv returns the first container's environment of a workload as name -> value.
func containerEnv(t *testing.T, o *unstructured.Unstructured) map[string]string {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	require.NotEmpty(t, cs)
	env := map[string]string{}
	list, _ := cs[0].(map[string]any)["env"].([]any)
	for _, e := range list {
		m := e.(map[string]any)
		v, _ := m["value"].(string)
		if _, ok := m["valueFrom"]; ok {
			v = "<from>"
		}
		env[m["name"].(string)] = v
	}
	return env
}

// rules returns a ClusterRole's or Role's rules as "group/resource:verb" strings (with
// "@name" for a rule that names its objects), sorted.
func rules(t *testing.T, o *unstructured.Unstructured) []string {
	t.Helper()
	require.NotNil(t, o)
	rs, _, _ := unstructured.NestedSlice(o.Object, "rules")
	var out []string
	for _, r := range rs {
		m := r.(map[string]any)
		names, _ := m["resourceNames"].([]any)
		if len(names) == 0 {
			names = []any{""}
		}
		for _, g := range m["apiGroups"].([]any) {
			for _, res := range m["resources"].([]any) {
				for _, v := range m["verbs"].([]any) {
					for _, n := range names {
						out = append(out, ruleString(g.(string), res.(string), v.(string), n.(string)))
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
