// SPDX-License-Identifier: Apache-2.0

package klogparserprocessor

import (
	"testing"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor/internal/klogline"
	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor/internal/metadata"
)

// FuzzProcessRecord writes whatever the parser makes of a line into pdata: no panic, a
// record that is not klog stays byte for byte as it was, and a parsed record is marked.
func FuzzProcessRecord(f *testing.F) {
	for _, s := range []string{
		`I0310 00:15:15.525108       1 controller_utils.go:116] "Pod status updated" pod="kube-system/kubedns" status="ready"`,
		"E0310 00:00:00.000000 1 a.go:1] \"m\" err=<\n\ta\n\tb\n > x={\"a\":[1]} y=null z=1.5",
		`{"ts":1580306777047.28,"caller":"s.go:7","msg":"m","v":2,"err":null,"pod":{"name":"n","namespace":"d"},"x":[1,{"a":[]},null]}`,
		`{"ts":1,"msg":"m","err":{"code":5}}`,
		`{"ts":1618993461233.1785,"msg":"FLAG: --v=\"2\"\n","v":1,"x":[1]}`,
		`{"msg":"m","v":3}`,
		`{"level":30,"time":1531171074631,"pid":657,"hostname":"h","msg":"m","v":1}`,
		"not klog",
	} {
		f.Add(s, "")
		f.Add(s, "kv.")
	}
	f.Fuzz(func(t *testing.T, line, prefix string) {
		cfg := createDefaultConfig().(*Config)
		cfg.AttributesPrefix = prefix
		cfg.KeepOriginal = true
		p, err := newKlogProcessor(processortest.NewNopSettings(metadata.Type), cfg)
		if err != nil {
			t.Fatal(err)
		}
		lr := plog.NewLogRecord()
		lr.Body().SetStr(line)
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)))
		var c counts
		p.processRecord(lr, new(klogline.Record), time.Now(), &c)
		_, marked := lr.Attributes().Get(attr.KlogFormat)
		switch {
		case c.notKlog == 1:
			if lr.Body().Str() != line || lr.Attributes().Len() != 0 || lr.Timestamp() != 0 {
				t.Fatalf("pass-through record changed: %v", lr.Attributes().AsRaw())
			}
		case c.text+c.json == 1:
			if orig, _ := lr.Attributes().Get(cfg.OriginalAttribute); !marked || orig.Str() != line {
				t.Fatalf("parsed record not marked or original lost: %v", lr.Attributes().AsRaw())
			}
		default:
			t.Fatalf("counts %+v", c)
		}
	})
}
