// SPDX-License-Identifier: Apache-2.0

package encoding

import (
	"crypto/sha256"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/batching"
)

// fullBatch is a batch as the node agent sends one: about 1 MiB of the typical record's
// messages.
func fullBatch() []types.InputLogEvent {
	res, rec := typical()
	msg, _ := AppendMessage(nil, JSON, res, rec, Extra{Key: "log.type", Value: "application"})
	events := make([]types.InputLogEvent, (1<<20)/(len(msg)+batching.EventOverhead))
	for i := range events {
		events[i] = types.InputLogEvent{Timestamp: aws.Int64(1_795_000_000_000 + int64(i)), Message: aws.String(string(msg))}
	}
	return events
}

// BenchmarkBodyHash is SigV4's pass over a body: all of it written into SHA-256.
func BenchmarkBodyHash(b *testing.B) {
	events := fullBatch()
	h := sha256.New()
	b.SetBytes(int64(NewPutLogEventsBody("g", "s", events).Len()))
	for b.Loop() {
		h.Reset()
		if _, err := io.Copy(h, NewPutLogEventsBody("g", "s", events)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBodySend is the transport's pass over a body: all of it written in pieces.
func BenchmarkBodySend(b *testing.B) {
	events := fullBatch()
	b.SetBytes(int64(NewPutLogEventsBody("g", "s", events).Len()))
	for b.Loop() {
		if _, err := io.Copy(struct{ io.Writer }{io.Discard}, NewPutLogEventsBody("g", "s", events)); err != nil {
			b.Fatal(err)
		}
	}
}
