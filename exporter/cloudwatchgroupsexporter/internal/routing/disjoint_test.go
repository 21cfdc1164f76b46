// SPDX-License-Identifier: Apache-2.0

package routing

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/naming"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// TestNamesAreDisjoint generates sources from names built of the characters that separate
// name parts (".", "/", "_", "-", "%", "#", ":") and of type words, UIDs and hex, and checks
// that two different sources never share a group or a stream: a group is decided by its kind
// (log type, namespace name, namespace UID, custom value) and value, a stream by its host and
// its file path or, without a path, its five container parts.
func TestNamesAreDisjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 14))
	pieces := []string{
		"a", "b", ".", "/", "_", "-", "%", "%25", "%2F", "#", ":", "0", "f", "application", "audit",
		"namespace", "custom/", "%pod/", "%rel/", "%type/", "%unit/", "7f0c1d2e-0000-4000-8000-000000000001",
	}
	word := func() string {
		var b strings.Builder
		for range rng.IntN(5) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	cfgs := map[string]Config{
		"namespace uid":  {GroupBy: ByNamespaceUID, GroupByOptional: []string{"team"}, InfrastructureNamespaces: []string{"kube-*"}, Hostname: "h"},
		"namespace name": {GroupBy: ByNamespaceName, GroupByOptional: []string{"team"}, GroupPrefix: "p", GroupSeparator: ".", Hostname: "h"},
	}
	for name, cfg := range cfgs {
		r, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		groups := map[string]string{}
		streams := map[string]string{}
		for range 20000 {
			res := pcommon.NewMap()
			put := func(k string) string {
				if rng.IntN(3) == 0 {
					return ""
				}
				v := word()
				res.PutStr(k, v)
				return v
			}
			host := put(attr.HostName)
			if host == "" {
				host = "\x00fallback"
			}
			path := put(attr.LogFilePath)
			unit := put(attr.JournalUnit)
			var parts []string
			for _, k := range containerKeys {
				parts = append(parts, put(k))
			}
			uid := put(attr.NamespaceUID)
			team := put("team")
			rt := r.Route(res, pcommon.NewMap())

			var source string
			switch {
			case path != "":
				source = fmt.Sprintf("%q path %q unit %q", host, path, unit)
			case strings.Join(parts, "") != "":
				source = fmt.Sprintf("%q parts %q", host, parts)
			default:
				source = fmt.Sprintf("%q type %s", host, rt.Type)
			}
			if prev, ok := streams[rt.Stream]; ok && prev != source {
				t.Fatalf("%s: sources %s and %s share stream %q", name, prev, source, rt.Stream)
			}
			streams[rt.Stream] = source

			ns := parts[0]
			var dest string
			switch {
			case team != "" && naming.KeepsGroup(kindCustom+team):
				dest = "custom " + team
			case rt.Type != Application:
				dest = "type " + string(rt.Type)
			case cfg.GroupBy == ByNamespaceUID && uid != "":
				dest = "uid " + uid
			case ns != "":
				dest = "namespace " + ns
			default:
				dest = "type " + string(rt.Type)
			}
			if prev, ok := groups[rt.Group]; ok && prev != dest {
				t.Fatalf("%s: destinations %s and %s share group %q", name, prev, dest, rt.Group)
			}
			groups[rt.Group] = dest
		}
	}
}
