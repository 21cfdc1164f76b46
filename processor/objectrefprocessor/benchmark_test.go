// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"context"
	"testing"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-k8s/otelcol-k8s/processor/objectrefprocessor/internal/metadata"
)

// benchRecords are kube-scheduler, kubelet and controller-manager records shaped as the klog
// parser writes them: the text form (references as strings) and the JSON form (maps), with the
// parser's own attributes, plus records without any reference.
func benchRecords(json bool) []map[string]any {
	ref := func(ns, name string) any {
		if json {
			if ns == "" {
				return map[string]any{"name": name}
			}
			return map[string]any{"name": name, "namespace": ns}
		}
		if ns == "" {
			return name
		}
		return ns + "/" + name
	}
	format := "text"
	if json {
		format = "json"
	}
	common := func(m map[string]any) map[string]any {
		m["thread.id"] = int64(1)
		m["code.file.path"] = "schedule_one.go"
		m["code.line.number"] = int64(252)
		m[attr.KlogFormat] = format
		return m
	}
	return []map[string]any{
		common(map[string]any{"pod": ref("default", "web-7d4b9c8f6-x2x9k"), "node": ref("", "node-12"), "evaluatedNodes": int64(6), "feasibleNodes": int64(3)}),
		common(map[string]any{"pod": ref("kube-system", "coredns-5d78c9869d-abcde"), "podUID": "6b1b0f4e-9c2b-4c49-9d0e-1f9a3c7e0a11", "containerName": "coredns"}),
		common(map[string]any{"replicaSet": ref("default", "web-7d4b9c8f6"), "duration": "1.2ms"}),
		common(map[string]any{"verb": "GET", "URI": "/api/v1/namespaces/default/pods", "latency": "1.5ms", "resp": int64(200)}),
	}
}

func newBenchProcessor(b *testing.B, cfg *Config) processor.Logs {
	set := processortest.NewNopSettings(metadata.Type)
	p, err := NewFactory().CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// BenchmarkProcessor measures the processor's per-record cost (ns/op is per record). Each
// record is processed once, in a fresh copy of a batch of 100 prepared outside the timer.
func BenchmarkProcessor(b *testing.B) {
	for _, tc := range []struct {
		name string
		json bool
		form Form
	}{
		{"text/string", false, FormString},
		{"json/string", true, FormString},
		{"text/map", false, FormMap},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := newBenchProcessor(b, &Config{Form: tc.form, Match: MatchConfig{Klog: true}})
			templ := plog.NewLogs()
			lrs := templ.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
			for range 25 {
				for _, attrs := range benchRecords(tc.json) {
					if err := lrs.AppendEmpty().Attributes().FromRaw(attrs); err != nil {
						b.Fatal(err)
					}
				}
			}
			consumeCopies(b, p, templ)
		})
	}
}

// consumeCopies runs b.N records through p, as fresh copies of templ made outside the timer,
// a chunk of batches at a time (the processor rewrites records, so each run needs new ones).
func consumeCopies(b *testing.B, p processor.Logs, templ plog.Logs) {
	perBatch := templ.LogRecordCount()
	const chunk = 64
	batches := make([]plog.Logs, chunk)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		b.StopTimer()
		n := 0
		for ; n < chunk && done+n*perBatch < b.N; n++ {
			batches[n] = plog.NewLogs()
			templ.CopyTo(batches[n])
		}
		b.StartTimer()
		for i := range n {
			if err := p.ConsumeLogs(context.Background(), batches[i]); err != nil {
				b.Fatal(err)
			}
		}
		done += n * perBatch
	}
}
