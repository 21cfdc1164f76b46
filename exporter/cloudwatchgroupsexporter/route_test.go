// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/routing"
)

// The resource object is rendered once per resource and routed log type: every message must
// still carry its own resource and type, when the resource changes and when a record's own
// attributes route it to another type within one resource. The streams come in order of
// first appearance, each with its records in order.
func TestEachMessageCarriesItsOwnResource(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Hostname = "node-1"
	cfg.RecordAttributes = []string{"source"}
	cfg.LogType.AuditMatchers = []routing.Matcher{{Key: "source", Pattern: "audit"}}
	e, err := newExporter(cfg, exportertest.NewNopSettings(metadata.Type))
	require.NoError(t, err)

	ld := plog.NewLogs()
	add := func(ns, pod string, sources ...string) {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("k8s.namespace.name", ns)
		rl.Resource().Attributes().PutStr("k8s.pod.name", pod)
		lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
		for k, s := range sources {
			lr := lrs.AppendEmpty()
			lr.Body().SetStr(pod + strconv.Itoa(k) + " " + s)
			if s != "" {
				lr.Attributes().PutStr("source", s)
			}
		}
	}
	add("kube-system", "a", "", "audit", "")
	add("kube-public", "d", "") // the same type as the record before it
	add("shop", "b", "", "")
	add("shop", "c", "audit")

	req := e.route(context.Background(), ld, time.Unix(1_800_000_000, 0))
	type resource struct {
		Namespace string `json:"k8s.namespace.name"`
		Pod       string `json:"k8s.pod.name"`
		Type      string `json:"otelcol_k8s.log.type"`
	}
	got := map[string]resource{}
	var layout []string // each stream's events in order, as "group stream: body"
	for _, s := range req.streams {
		for _, ev := range s.events {
			var m struct {
				Body     string   `json:"body"`
				Resource resource `json:"resource"`
			}
			var text string
			require.NoError(t, json.Unmarshal([]byte(`"`+ev.Message+`"`), &text))
			require.NoError(t, json.Unmarshal([]byte(text), &m), text)
			got[m.Body] = m.Resource
			layout = append(layout, s.id.group+" "+s.id.stream+": "+m.Body)
		}
	}
	want := map[string]resource{
		"a0 ":      {"kube-system", "a", "infrastructure"},
		"a1 audit": {"kube-system", "a", "audit"},
		"a2 ":      {"kube-system", "a", "infrastructure"},
		"d0 ":      {"kube-public", "d", "infrastructure"},
		"b0 ":      {"shop", "b", "application"},
		"b1 ":      {"shop", "b", "application"},
		"c0 audit": {"shop", "c", "audit"},
	}
	require.Equal(t, want, got)
	// Streams in order of first appearance, each with its records in order.
	wantLayout := []string{
		"infrastructure node-1/%pod/kube-system_a___: a0 ",
		"infrastructure node-1/%pod/kube-system_a___: a2 ",
		"audit node-1/%pod/kube-system_a___: a1 audit",
		"infrastructure node-1/%pod/kube-public_d___: d0 ",
		"application node-1/%pod/shop_b___: b0 ",
		"application node-1/%pod/shop_b___: b1 ",
		"audit node-1/%pod/shop_c___: c0 audit",
	}
	require.Equal(t, wantLayout, layout)
}
