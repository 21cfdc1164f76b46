// SPDX-License-Identifier: Apache-2.0

package encoding

import (
	"strings"
	"testing"
)

// A message as the JSON format writes it, escaped again inside a PutLogEvents body.
var benchMessage = `{"timestamp":"2026-11-22T01:02:03.000001Z","severity_number":9,"body":"I1122 01:02:03.000001 1 handler.go:42] request 1 done ` +
	strings.Repeat("x", 140) + `","attributes":{"log.iostream":"stdout","log.type":"application"},"resource":{"host.name":"node-1","k8s.namespace.name":"shop","k8s.pod.name":"web-1"}}`

func BenchmarkAppendString(b *testing.B) {
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(benchMessage)))
	for b.Loop() {
		buf = appendString(buf[:0], benchMessage)
	}
}

func BenchmarkAppendStringPlain(b *testing.B) {
	s := strings.Repeat("x", len(benchMessage))
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = appendString(buf[:0], s)
	}
}
