// SPDX-License-Identifier: Apache-2.0

package routing

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// TestRouteMemoMatchesRoute routes random records of random resources, drawn from every key
// the router knows and a few it does not, both ways, under several configurations.
func TestRouteMemoMatchesRoute(t *testing.T) {
	keys := []string{
		attr.LogFilePath, attr.K8sNamespaceName, attr.NamespaceUID, attr.K8sPodName, attr.K8sPodUID, attr.K8sContainerName,
		attr.K8sContainerRestartCount, attr.HostName, attr.K8sNodeName, attr.LogType, "app", "team", "log.iostream",
	}
	values := []string{
		"", "shop", "kube-system", "default", "application", "audit", "/var/log/journal/x",
		"/var/log/kube-apiserver/audit-1.log", "/var/log/pods/shop_web-1_0a1b/web/0.log", "bad:name*", "uid-1",
	}
	configs := map[string]func(*Config){
		"defaults":      func(*Config) {},
		"namespace uid": func(c *Config) { c.GroupBy = ByNamespaceUID },
		"optional keys": func(c *Config) {
			c.GroupBy, c.GroupByOptional, c.GroupPrefix, c.GroupSeparator = ByNamespaceName, []string{"team", "app"}, "k8s", "/"
		},
		"template": func(c *Config) { c.StreamTemplate = "${host}/${app}/${log_type}/${routing_key}" },
		"record attributes": func(c *Config) {
			c.GroupBy, c.GroupByOptional = ByNamespaceName, []string{"team"}
			c.RecordAttributes = []string{attr.LogFilePath, attr.K8sNamespaceName, "team", attr.LogType}
		},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	randomAttrs := func(n int) pcommon.Map {
		m := pcommon.NewMap()
		for range rng.IntN(n) {
			m.PutStr(keys[rng.IntN(len(keys))], values[rng.IntN(len(values))])
		}
		return m
	}
	for name, change := range configs {
		cfg := defaultCfg
		change(&cfg)
		r, err := New(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for range 300 {
			res := randomAttrs(8)
			var memo Memo
			for range 10 {
				rec := randomAttrs(3)
				got, want := r.RouteMemo(&memo, res, rec), r.Route(res, rec)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: res %v rec %v: memo %+v, direct %+v", name, res.AsRaw(), rec.AsRaw(), got, want)
				}
			}
		}
	}
}
