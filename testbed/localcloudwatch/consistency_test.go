// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// TestCreationDelay: with CreationDelay, a new group and a new stream answer
// ResourceNotFoundException to everything but their own Create (which says they exist) and
// are not listed, until the delay has passed; then they work as usual.
func TestCreationDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	_, c := start(t, localcloudwatch.Config{CreationDelay: delay})
	created := time.Now()
	if _, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("g")}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("g")})
	if got := errCode(t, err); got != "ResourceAlreadyExistsException" {
		t.Fatalf("second create: %q", got)
	}
	_, err = c.CreateLogStream(ctx(t), &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s")})
	if time.Since(created) < delay {
		if got := errCode(t, err); got != "ResourceNotFoundException" {
			t.Fatalf("stream in a group created moments ago: %q", got)
		}
		dg, err := c.DescribeLogGroups(ctx(t), &cloudwatchlogs.DescribeLogGroupsInput{})
		if err != nil {
			t.Fatal(err)
		}
		if len(dg.LogGroups) != 0 && time.Since(created) < delay {
			t.Fatalf("group listed before the delay: %v", dg.LogGroups)
		}
	}
	waitUntil(t, func() bool {
		_, err := c.CreateLogStream(ctx(t), &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s")})
		return err == nil
	})
	if time.Since(created) < delay {
		t.Fatalf("stream created %s after the group, before the delay", time.Since(created))
	}
	streamCreated := time.Now()
	_, err = c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), LogEvents: events([]int64{time.Now().UnixMilli()})})
	if time.Since(streamCreated) < delay {
		if got := errCode(t, err); got != "ResourceNotFoundException" {
			t.Fatalf("put into a stream created moments ago: %q", got)
		}
	}
	waitUntil(t, func() bool {
		_, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), LogEvents: events([]int64{time.Now().UnixMilli()})})
		return err == nil
	})
}

// TestQuotasOnByDefault: the zero Config throttles CreateLogGroup beyond AWS's 5 per second;
// Unlimited does not.
func TestQuotasOnByDefault(t *testing.T) {
	for _, tc := range []struct {
		name      string
		quotas    localcloudwatch.Quotas
		throttled bool
	}{{"default", localcloudwatch.Quotas{}, true}, {"unlimited", localcloudwatch.Unlimited(), false}} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := start(t, localcloudwatch.Config{Quotas: tc.quotas})
			throttled := false
			for i := range 20 {
				_, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("g" + string(rune('a'+i)))})
				if err != nil {
					if got := errCode(t, err); got != "ThrottlingException" {
						t.Fatalf("create %d: %q", i, got)
					}
					throttled = true
				}
			}
			if throttled != tc.throttled {
				t.Fatalf("20 CreateLogGroup at once throttled: %v, want %v", throttled, tc.throttled)
			}
		})
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
