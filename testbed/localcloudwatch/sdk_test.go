// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/smithy-go"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// start runs a server for one test and returns it with an SDK client that does not
// retry (so every answer is visible).
func start(t *testing.T, cfg localcloudwatch.Config) (*localcloudwatch.Server, *cloudwatchlogs.Client) {
	t.Helper()
	srv := localcloudwatch.New(cfg)
	endpoint, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, newClient(endpoint, aws.NopRetryer{})
}

func newClient(endpoint string, retryer aws.Retryer) *cloudwatchlogs.Client {
	return cloudwatchlogs.New(cloudwatchlogs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDLOCAL", "secret", ""),
		Retryer:      retryer,
	})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// errCode returns the API error code of err, "" for nil.
func errCode(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("not an API error: %v", err)
	}
	return ae.ErrorCode()
}

func mustCreate(t *testing.T, c *cloudwatchlogs.Client, group string, streams ...string) {
	t.Helper()
	if _, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(group)}); err != nil {
		t.Fatalf("CreateLogGroup %s: %v", group, err)
	}
	for _, s := range streams {
		if _, err := c.CreateLogStream(ctx(t), &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String(group), LogStreamName: aws.String(s)}); err != nil {
			t.Fatalf("CreateLogStream %s/%s: %v", group, s, err)
		}
	}
}

func events(ts []int64, msgs ...string) []types.InputLogEvent {
	out := make([]types.InputLogEvent, len(ts))
	for i, t := range ts {
		m := "event"
		if i < len(msgs) {
			m = msgs[i]
		}
		out[i] = types.InputLogEvent{Timestamp: aws.Int64(t), Message: aws.String(m)}
	}
	return out
}

func nowMillis() int64 { return time.Now().UnixMilli() }
