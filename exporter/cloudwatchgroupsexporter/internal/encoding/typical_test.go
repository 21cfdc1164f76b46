// SPDX-License-Identifier: Apache-2.0

package encoding

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// typical is a container line as the node pipeline leaves it: a klog message with its
// key/values and object references, a container's resource.
func typical() (pcommon.Map, plog.LogRecord) {
	res := pcommon.NewMap()
	res.PutStr("host.name", "ip-10-0-12-34.eu-west-1.compute.internal")
	res.PutStr("k8s.namespace.name", "kube-system")
	res.PutStr("k8s.pod.name", "coredns-5d78c9869d-8xk2p")
	res.PutStr("k8s.pod.uid", "1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901")
	res.PutStr("k8s.container.name", "coredns")
	res.PutInt("k8s.container.restart_count", 0)
	rec := plog.NewLogRecord()
	rec.SetTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 11, 22, 1, 2, 3, 456_789_000, time.UTC)))
	rec.SetObservedTimestamp(rec.Timestamp())
	rec.SetSeverityText("INFO")
	rec.SetSeverityNumber(plog.SeverityNumberInfo)
	rec.Body().SetStr("Successfully assigned pod to node after waiting for volume attachment")
	a := rec.Attributes()
	a.PutStr("log.iostream", "stderr")
	a.PutStr("klog.source", "scheduler.go:123")
	a.PutInt("thread_id", 1)
	a.PutStr("pod", "default/web-7d9f8c6b5-abcde")
	a.PutStr("node", "ip-10-0-12-34")
	a.PutStr("k8s.object.kind", "Pod")
	a.PutStr("k8s.object.namespace", "default")
	a.PutStr("k8s.object.name", "web-7d9f8c6b5-abcde")
	return res, rec
}

// BenchmarkTypicalMessage writes a typical record's message and copies it into a body, as the
// exporter does per event (the message is escaped as it is written).
func BenchmarkTypicalMessage(b *testing.B) {
	res, rec := typical()
	var buf, body []byte
	for b.Loop() {
		buf, _ = AppendMessage(buf[:0], JSON, res, rec, Extra{Key: "log.type", Value: "application"})
		body = append(append(append(body[:0], '"'), buf...), '"')
	}
}

// BenchmarkTypicalRecord is BenchmarkTypicalMessage as the exporter writes a record: its
// resource object rendered once for the records of its resource.
func BenchmarkTypicalRecord(b *testing.B) {
	res, rec := typical()
	e := Encoder{Format: JSON}
	e.SetResource(res, Extra{Key: "log.type", Value: "application"})
	var buf, body []byte
	for b.Loop() {
		buf, _ = e.Append(buf[:0], rec)
		body = append(append(append(body[:0], '"'), buf...), '"')
	}
}
