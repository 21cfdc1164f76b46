// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answersEarly is an HTTP client that answers a request before reading its body, as a server
// that refuses a request at once can, and keeps the body: a transport's write loop can still
// be copying it to the connection after the call has returned (net/http returns the response
// as soon as it arrives, and closes the connection later).
type answersEarly struct {
	status int
	body   io.Reader // the request body it kept
}

func (a *answersEarly) Do(req *http.Request) (*http.Response, error) {
	a.body = req.Body
	// The SDK hashed the body for SigV4 before sending: read a little of it again, as a
	// transport that has started writing.
	if _, err := io.ReadFull(req.Body, make([]byte, 100)); err != nil {
		return nil, err
	}
	body := `{}`
	if a.status != http.StatusOK {
		body = `{"__type":"ServiceUnavailableException","message":"try again"}`
	}
	return &http.Response{
		StatusCode: a.status, Status: http.StatusText(a.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.1"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: req,
	}, nil
}

// The messages of a call live in buffers the exporter reuses once the push is done with them,
// so once the call has returned, failed or not, its body must never read them again. The SDK
// sees to it (it closes the transport's hold on the body when the HTTP client returns); this
// checks that it still does, with the exporter's own client options.
func TestBodyNotReadAfterTheCallReturns(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			memory := bytes.Repeat([]byte{'a'}, 1<<20)
			var events []types.InputLogEvent
			for off := 0; off < len(memory); off += 64 << 10 {
				msg := unsafe.String(&memory[off], 64<<10)
				events = append(events, types.InputLogEvent{Timestamp: aws.Int64(1700000000000), Message: &msg})
			}
			transport := &answersEarly{status: status}
			client := cloudwatchlogs.New(cloudwatchlogs.Options{
				Region:      "us-east-1",
				Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
				HTTPClient:  transport,
			}, clientOptions("http://127.0.0.1:1"))
			_, err := client.PutLogEvents(context.Background(), &cloudwatchlogs.PutLogEventsInput{
				LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), LogEvents: events,
			})
			if status == http.StatusOK {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}

			for i := range memory { // the exporter reuses the messages' buffers
				memory[i] = 'Z'
			}
			rest, err := io.ReadAll(transport.body)
			require.NoError(t, err)
			assert.Empty(t, rest, "the body read the messages' memory after the call returned")
		})
	}
}
