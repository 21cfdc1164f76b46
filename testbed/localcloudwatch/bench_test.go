// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// putBody is a PutLogEvents request body of n events of msgLen bytes.
func putBody(n, msgLen int, ts int64) []byte {
	type ev struct {
		Timestamp int64  `json:"timestamp"`
		Message   string `json:"message"`
	}
	in := struct {
		LogGroupName  string `json:"logGroupName"`
		LogStreamName string `json:"logStreamName"`
		LogEvents     []ev   `json:"logEvents"`
	}{LogGroupName: "g", LogStreamName: "s"}
	msg := strings.Repeat("m", msgLen)
	for range n {
		in.LogEvents = append(in.LogEvents, ev{ts, msg})
	}
	b, _ := json.Marshal(in)
	return b
}

// BenchmarkPutLogEventsHandler measures the server's own cost of one full PutLogEvents
// batch (about 1 MiB: 5,000 events of 183 bytes), without the network.
func BenchmarkPutLogEventsHandler(b *testing.B) {
	for _, discard := range []bool{false, true} {
		b.Run(fmt.Sprintf("discard=%v", discard), func(b *testing.B) {
			srv := localcloudwatch.New(localcloudwatch.Config{DiscardMessages: discard})
			h := srv.Handler()
			call := func(op, body string) int {
				req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
				req.Header.Set("X-Amz-Target", "Logs_20140328."+op)
				req.Header.Set("Content-Type", "application/x-amz-json-1.1")
				req.Header.Set("Authorization", fakeAuth)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec.Code
			}
			call("CreateLogGroup", `{"logGroupName":"g"}`)
			call("CreateLogStream", `{"logGroupName":"g","logStreamName":"s"}`)
			body := putBody(5000, 183, time.Now().UnixMilli())
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
				req.Header.Set("X-Amz-Target", "Logs_20140328.PutLogEvents")
				req.Header.Set("Content-Type", "application/x-amz-json-1.1")
				req.Header.Set("Authorization", fakeAuth)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
			b.ReportMetric(float64(b.N*5000)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
