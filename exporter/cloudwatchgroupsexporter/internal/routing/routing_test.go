// SPDX-License-Identifier: Apache-2.0

package routing

import (
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func attrs(kv ...string) pcommon.Map {
	m := pcommon.NewMap()
	for i := 0; i+1 < len(kv); i += 2 {
		m.PutStr(kv[i], kv[i+1])
	}
	return m
}

var defaultCfg = Config{
	TypeAttribute:            "otelcol_k8s.log.type",
	InfrastructureNamespaces: []string{"default", "kube-*", "openshift-*"},
	JournalMatchers:          []Matcher{{Key: "log.file.path", Pattern: "/var/log/journal/*"}},
	AuditMatchers:            []Matcher{{Key: "log.file.path", Pattern: "/var/log/kube-apiserver/audit*.log"}},
	Hostname:                 "fallback-host",
}

const podPath = "/var/log/pods/shop_web-1_0a1b/web/0.log"

func TestRoute(t *testing.T) {
	tests := []struct {
		name          string
		cfg           func(*Config)
		res, rec      pcommon.Map
		wantType      LogType
		wantGroup     string
		wantStream    string
		wantFallbacks []string
	}{
		{
			name:       "application by log type",
			res:        attrs("k8s.node.name", "node-1", "k8s.namespace.name", "shop", "log.file.path", podPath),
			wantType:   Application,
			wantGroup:  "application",
			wantStream: "node-1/var/log/pods/shop_web-1_0a1b/web/0.log",
		},
		{
			name:       "host.name wins over node name",
			res:        attrs("host.name", "ip-10-0-0-1", "k8s.node.name", "node-1", "k8s.namespace.name", "shop", "log.file.path", podPath),
			wantType:   Application,
			wantGroup:  "application",
			wantStream: "ip-10-0-0-1/var/log/pods/shop_web-1_0a1b/web/0.log",
		},
		{
			name:       "infrastructure namespace",
			res:        attrs("k8s.node.name", "n", "k8s.namespace.name", "kube-system", "log.file.path", "/var/log/pods/kube-system_x_1/c/0.log"),
			wantType:   Infrastructure,
			wantGroup:  "infrastructure",
			wantStream: "n/var/log/pods/kube-system_x_1/c/0.log",
		},
		{
			name:       "default namespace exact",
			res:        attrs("k8s.namespace.name", "default", "log.file.path", "/a"),
			wantType:   Infrastructure,
			wantGroup:  "infrastructure",
			wantStream: "fallback-host/a",
		},
		{
			name:       "defaults is not default",
			cfg:        func(c *Config) { c.GroupBy = ByNamespaceName },
			res:        attrs("k8s.namespace.name", "defaults", "log.file.path", "/a"),
			wantType:   Application,
			wantGroup:  "namespace/defaults",
			wantStream: "fallback-host/a",
		},
		{
			name:       "journal",
			res:        attrs("log.file.path", "/var/log/journal/abc/system.journal"),
			wantType:   Infrastructure,
			wantGroup:  "infrastructure",
			wantStream: "fallback-host/var/log/journal/abc/system.journal",
		},
		{
			name:       "journal unit: one stream per unit of a journal and node",
			res:        attrs("host.name", "node-1", "log.file.path", "/var/log/journal/abc/system.journal", "otelcol_k8s.journal.unit", "kubelet.service"),
			wantType:   Infrastructure,
			wantGroup:  "infrastructure",
			wantStream: "node-1/var/log/journal/abc/system.journal%unit/kubelet.service",
		},
		{
			name:       "journal unit with a percent sign",
			res:        attrs("host.name", "node-1", "log.file.path", "/var/log/journal/abc/system.journal", "otelcol_k8s.journal.unit", "a%unit/b.service"),
			wantType:   Infrastructure,
			wantGroup:  "infrastructure",
			wantStream: "node-1/var/log/journal/abc/system.journal%unit/a%25unit/b.service",
		},
		{
			name:       "a unit in a record attribute is content, even when listed",
			cfg:        func(c *Config) { c.RecordAttributes = []string{"otelcol_k8s.journal.unit"} },
			res:        attrs("host.name", "node-1", "log.file.path", "/var/log/journal/abc/system.journal"),
			rec:        attrs("otelcol_k8s.journal.unit", "kubelet.service"),
			wantType:   Infrastructure,
			wantGroup:  "infrastructure",
			wantStream: "node-1/var/log/journal/abc/system.journal",
		},
		{
			name:       "audit",
			cfg:        func(c *Config) { c.GroupBy = ByNamespaceName },
			res:        attrs("log.file.path", "/var/log/kube-apiserver/audit-2.log", "k8s.namespace.name", "shop"),
			wantType:   Audit,
			wantGroup:  "audit",
			wantStream: "fallback-host/var/log/kube-apiserver/audit-2.log",
		},
		{
			name:       "type attribute set upstream on the resource",
			res:        attrs("otelcol_k8s.log.type", "audit", "k8s.namespace.name", "shop", "log.file.path", "/a"),
			wantType:   Audit,
			wantGroup:  "audit",
			wantStream: "fallback-host/a",
		},
		{
			name:       "unknown type attribute ignored",
			res:        attrs("otelcol_k8s.log.type", "bogus", "k8s.namespace.name", "shop", "log.file.path", "/a"),
			wantType:   Application,
			wantGroup:  "application",
			wantStream: "fallback-host/a",
		},
		{
			name:       "namespace name with prefix",
			cfg:        func(c *Config) { c.GroupBy = ByNamespaceName; c.GroupPrefix = "prod/cluster-1"; c.GroupSeparator = "." },
			res:        attrs("k8s.namespace.name", "shop", "log.file.path", "/a"),
			wantType:   Application,
			wantGroup:  "prod/cluster-1.namespace/shop",
			wantStream: "fallback-host/a",
		},
		{
			name:       "namespace named like a type group",
			cfg:        func(c *Config) { c.GroupBy = ByNamespaceName },
			res:        attrs("k8s.namespace.name", "audit", "log.file.path", "/a"),
			wantType:   Application,
			wantGroup:  "namespace/audit",
			wantStream: "fallback-host/a",
		},
		{
			name:       "infrastructure keeps log type group under namespace grouping",
			cfg:        func(c *Config) { c.GroupBy = ByNamespaceUID; c.GroupPrefix = "p"; c.GroupSeparator = "/" },
			res:        attrs("k8s.namespace.name", "openshift-dns", "otelcol_k8s.namespace.uid", "u-1", "log.file.path", "/a"),
			wantType:   Infrastructure,
			wantGroup:  "p/infrastructure",
			wantStream: "fallback-host/a",
		},
		{
			name:       "namespace uid",
			cfg:        func(c *Config) { c.GroupBy = ByNamespaceUID },
			res:        attrs("otelcol_k8s.namespace.uid", "7f0c1d2e-0000-4000-8000-000000000001", "k8s.namespace.name", "shop", "log.file.path", "/a"),
			wantType:   Application,
			wantGroup:  "namespace-uid/7f0c1d2e-0000-4000-8000-000000000001",
			wantStream: "fallback-host/a",
		},
		{
			name:          "namespace uid missing falls back to name",
			cfg:           func(c *Config) { c.GroupBy = ByNamespaceUID },
			res:           attrs("k8s.namespace.name", "7f0c1d2e-0000-4000-8000-000000000001", "log.file.path", "/a"),
			wantType:      Application,
			wantGroup:     "namespace/7f0c1d2e-0000-4000-8000-000000000001",
			wantStream:    "fallback-host/a",
			wantFallbacks: []string{ReasonNamespaceUIDMissing},
		},
		{
			name:          "namespace uid and name missing fall back to type",
			cfg:           func(c *Config) { c.GroupBy = ByNamespaceUID },
			res:           attrs("log.file.path", "/a"),
			wantType:      Application,
			wantGroup:     "application",
			wantStream:    "fallback-host/a",
			wantFallbacks: []string{ReasonNamespaceUIDMissing, ReasonNamespaceNameMissing},
		},
		{
			name:       "optional key wins, even for infrastructure",
			cfg:        func(c *Config) { c.GroupByOptional = []string{"k8s.pod.label.log-group", "team"} },
			res:        attrs("team", "payments", "k8s.namespace.name", "kube-system", "log.file.path", "/a"),
			wantType:   Infrastructure,
			wantGroup:  "custom/payments",
			wantStream: "fallback-host/a",
		},
		{
			name:       "optional value named like a type group",
			cfg:        func(c *Config) { c.GroupByOptional = []string{"team"} },
			res:        attrs("team", "audit", "log.file.path", "/a"),
			wantType:   Application,
			wantGroup:  "custom/audit",
			wantStream: "fallback-host/a",
		},
		{
			name:          "optional invalid and empty values skipped",
			cfg:           func(c *Config) { c.GroupByOptional = []string{"a", "b", "c", "d"}; c.GroupBy = ByNamespaceName },
			res:           attrs("a", "", "b", "has space", "c", "x#0123456789ab", "k8s.namespace.name", "shop", "log.file.path", "/a"),
			wantType:      Application,
			wantGroup:     "namespace/shop",
			wantStream:    "fallback-host/a",
			wantFallbacks: []string{ReasonOptionalInvalid, ReasonOptionalInvalid},
		},
		{
			name:       "stream key from pod attributes",
			res:        attrs("k8s.namespace.name", "shop", "k8s.pod.name", "web-1", "k8s.pod.uid", "0a1b", "k8s.container.name", "web", "k8s.container.restart_count", "2"),
			wantType:   Application,
			wantGroup:  "application",
			wantStream: "fallback-host/%pod/shop_web-1_0a1b_web_2",
		},
		{
			name:       "stream key keeps the place of a missing part",
			res:        attrs("k8s.namespace.name", "shop", "k8s.pod.name", "web-1", "k8s.container.name", "web"),
			wantType:   Application,
			wantGroup:  "application",
			wantStream: "fallback-host/%pod/shop_web-1__web_",
		},
		{
			name:       "stream key escapes separators inside parts",
			res:        attrs("k8s.namespace.name", "a_b", "k8s.pod.name", "100%", "host.name", "h/1"),
			wantType:   Application,
			wantGroup:  "application",
			wantStream: "h%2F1/%pod/a%5Fb_100%25___",
		},
		{
			name:       "relative path",
			res:        attrs("log.file.path", "x/y"),
			wantType:   Application,
			wantGroup:  "application",
			wantStream: "fallback-host/%rel/x/y",
		},
		{
			name:          "no stream key",
			res:           attrs(),
			wantType:      Application,
			wantGroup:     "application",
			wantStream:    "fallback-host/%type/application",
			wantFallbacks: []string{ReasonStreamKeyMissing},
		},
		{
			// cri_log puts the source on the resource; object_ref puts the subject of the line
			// (here a pod in shop that the scheduler bound) on the record. The source routes.
			name: "resource (source) wins over record (subject)",
			cfg:  func(c *Config) { c.GroupBy = ByNamespaceName },
			res: attrs("k8s.node.name", "n", "k8s.namespace.name", "kube-system", "k8s.pod.name", "kube-scheduler-n",
				"k8s.pod.uid", "u1", "k8s.container.name", "kube-scheduler", "k8s.container.restart_count", "0"),
			rec:        attrs("k8s.namespace.name", "shop", "k8s.pod.name", "web-1", "k8s.pod.uid", "u2"),
			wantType:   Infrastructure,
			wantGroup:  "infrastructure",
			wantStream: "n/%pod/kube-system_kube-scheduler-n_u1_kube-scheduler_0",
		},
		{
			// A line that logs every routing key (klog key="value" pairs lifted into record
			// attributes) still lands in its own source's group and stream.
			name: "log content never chooses the destination",
			cfg: func(c *Config) {
				c.GroupBy = ByNamespaceUID
				c.GroupByOptional = []string{"team"}
			},
			res: attrs("k8s.node.name", "n", "k8s.namespace.name", "shop", "otelcol_k8s.namespace.uid", "uid-shop",
				"k8s.pod.name", "web-1", "k8s.pod.uid", "u1", "k8s.container.name", "web", "k8s.container.restart_count", "0"),
			rec: attrs("otelcol_k8s.log.type", "audit", "log.type", "audit", "k8s.namespace.uid", "uid-bank",
				"otelcol_k8s.namespace.uid", "uid-bank", "k8s.namespace.name", "kube-system", "log.file.path", "/var/log/kube-apiserver/audit.log",
				"team", "payments", "host.name", "other", "k8s.pod.name", "bank-1", "k8s.container.restart_count", "9"),
			wantType:   Application,
			wantGroup:  "namespace-uid/uid-shop",
			wantStream: "n/%pod/shop_web-1_u1_web_0",
		},
		{
			name: "record attributes are read only where listed",
			cfg: func(c *Config) {
				c.RecordAttributes = []string{"log.file.path"}
				c.GroupBy = ByNamespaceName
			},
			res:        attrs("k8s.namespace.name", "shop"),
			rec:        attrs("log.file.path", "/var/log/kube-apiserver/audit-1.log", "otelcol_k8s.log.type", "infrastructure"),
			wantType:   Audit,
			wantGroup:  "audit",
			wantStream: "fallback-host/var/log/kube-apiserver/audit-1.log",
		},
		{
			name:       "template",
			cfg:        func(c *Config) { c.StreamTemplate = "${log_type}/${k8s.pod.name}/${missing}/${host}/${routing_key}" },
			res:        attrs("k8s.pod.name", "web-1", "log.file.path", "/x/y"),
			rec:        attrs("missing", "from-the-line"),
			wantType:   Application,
			wantGroup:  "application",
			wantStream: "application/web-1/-/fallback-host/x/y",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := defaultCfg
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			r, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			res, rec := tt.res, tt.rec
			if res == (pcommon.Map{}) {
				res = pcommon.NewMap()
			}
			if rec == (pcommon.Map{}) {
				rec = pcommon.NewMap()
			}
			got := r.Route(res, rec)
			if got.Type != tt.wantType || got.Group != tt.wantGroup || got.Stream != tt.wantStream {
				t.Fatalf("Route = %s %q %q, want %s %q %q", got.Type, got.Group, got.Stream, tt.wantType, tt.wantGroup, tt.wantStream)
			}
			if !slices.Equal(got.Fallbacks, tt.wantFallbacks) {
				t.Fatalf("fallbacks = %v, want %v", got.Fallbacks, tt.wantFallbacks)
			}
		})
	}
}

func TestRouteSanitizes(t *testing.T) {
	r, err := New(Config{GroupBy: ByLogType, GroupPrefix: strings.Repeat("p", 510), GroupSeparator: ".", StreamTemplate: "a:${k8s.pod.name}"})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Route(attrs("k8s.pod.name", "web"), pcommon.NewMap())
	if !got.GroupRewritten || len(got.Group) != 512 || !got.StreamRewritten || !strings.HasPrefix(got.Stream, "a_web#") {
		t.Fatalf("got %+v", got)
	}
}

func TestNewErrors(t *testing.T) {
	for _, cfg := range []Config{
		{GroupBy: "namespace"},
		{AuditMatchers: []Matcher{{Key: "x"}}},
		{StreamTemplate: "${host"},
		{StreamTemplate: "a${}"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"kube-*", "kube-system", true},
		{"kube-*", "kube-", true},
		{"kube-*", "kubes", false},
		{"default", "default", true},
		{"default", "defaults", false},
		{"*", "", true},
		{"/var/log/*/audit*.log", "/var/log/a/b/audit-1.log", true},
		{"/var/log/*/audit*.log", "/var/log/a/b/audit-1.log.gz", false},
		{"a?c", "abc", true},
		{"a?c", "aéc", true},
		{"a?c", "ac", false},
		{"*a*b", "xxaxxbxb", true},
		{"", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := globMatch(tt.pattern, tt.s); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func FuzzGlob(f *testing.F) {
	f.Add("kube-*", "kube-system")
	f.Add("*?*", "é")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		_ = globMatch(pattern, s) // must not panic or loop
		if !globMatch(s, s) && !strings.ContainsAny(s, "*?") {
			t.Fatalf("%q does not match itself", s)
		}
	})
}

func FuzzTemplate(f *testing.F) {
	f.Add("${host}.${routing_key}")
	f.Add("${")
	f.Fuzz(func(t *testing.T, tmpl string) {
		r, err := New(Config{StreamTemplate: tmpl, Hostname: "h"})
		if err != nil {
			return
		}
		got := r.Route(attrs("log.file.path", "/p"), pcommon.NewMap())
		if got.Stream == "" {
			t.Fatal("empty stream name")
		}
	})
}
