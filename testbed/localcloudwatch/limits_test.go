// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	hour = int64(time.Hour / time.Millisecond)
	day  = 24 * hour
)

func fixedClock() time.Time { return fixedNow }

func batchOfSize(n, msgLen int, ts int64) []types.InputLogEvent {
	msg := strings.Repeat("x", msgLen)
	out := make([]types.InputLogEvent, n)
	for i := range out {
		out[i] = types.InputLogEvent{Timestamp: aws.Int64(ts), Message: aws.String(msg)}
	}
	return out
}

func TestPutLogEventsLimits(t *testing.T) {
	now := fixedNow.UnixMilli()
	cases := []struct {
		name      string
		limits    localcloudwatch.Limits
		retention int32
		events    []types.InputLogEvent
		wantCode  string
		wantMsg   string // substring of the error message
		wantInfo  *types.RejectedLogEventsInfo
		stored    int
	}{
		{name: "one event", events: events([]int64{now}), stored: 1},
		{name: "empty batch", events: []types.InputLogEvent{}, wantCode: "InvalidParameterException", wantMsg: "greater than or equal to 1"},
		{name: "10000 events", events: batchOfSize(10_000, 1, now), stored: 10_000},
		{name: "10001 events", events: batchOfSize(10_001, 1, now), wantCode: "InvalidParameterException", wantMsg: "less than or equal to 10000"},
		{name: "one event of exactly 1 MiB with overhead", events: batchOfSize(1, 1_048_576-26, now), stored: 1},
		{name: "one event 1 byte over", events: batchOfSize(1, 1_048_576-25, now), wantCode: "InvalidParameterException", wantMsg: "Log event too large: 1048577 bytes exceeds limit of 1048576"},
		{name: "batch of exactly 1 MiB", events: batchOfSize(4, 262_144-26, now), stored: 4},
		{name: "batch 1 byte over", events: append(batchOfSize(3, 262_144-26, now), batchOfSize(1, 262_144-25, now)...), wantCode: "InvalidParameterException", wantMsg: "Upload too large: 1048577 bytes exceeds limit of 1048576"},
		{name: "26 bytes counted per event", events: batchOfSize(10_000, 78, now), stored: 10_000},
		{name: "26 bytes counted per event, over", events: batchOfSize(10_000, 79, now), wantCode: "InvalidParameterException", wantMsg: "Upload too large: 1050000 bytes"},
		{name: "smaller event limit", limits: localcloudwatch.Limits{MaxEventBytes: 1000}, events: batchOfSize(1, 975, now), wantCode: "InvalidParameterException", wantMsg: "Log event too large: 1001 bytes exceeds limit of 1000"},
		{name: "empty message", events: events([]int64{now}, ""), wantCode: "InvalidParameterException", wantMsg: "logEvents.1.member.message"},
		{name: "out of order", events: events([]int64{now, now - 1}), wantCode: "InvalidParameterException", wantMsg: "chronological order"},
		{name: "equal timestamps", events: events([]int64{now, now, now}), stored: 3},
		{name: "span exactly 24h", events: events([]int64{now - day, now}), stored: 2},
		{name: "span over 24h", events: events([]int64{now - day - 1, now}), wantCode: "InvalidParameterException", wantMsg: "cannot span more than 24 hours"},
		{
			name: "span counts accepted events only", events: events([]int64{now - 15*day, now - 1}),
			wantInfo: &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: aws.Int32(1)}, stored: 1,
		},
		{
			name: "too old", events: events([]int64{now - 15*day, now - 14*day - 1, now - hour}),
			wantInfo: &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: aws.Int32(2)}, stored: 1,
		},
		{name: "exactly 14 days old accepted", events: events([]int64{now - 14*day}), stored: 1},
		{
			name: "too new", events: events([]int64{now, now + 2*hour, now + 2*hour + 1, now + 3*hour}),
			wantInfo: &types.RejectedLogEventsInfo{TooNewLogEventStartIndex: aws.Int32(2)}, stored: 2,
		},
		{
			name: "too old and too new", events: events([]int64{now - 20*day, now, now + 3*hour}),
			wantInfo: &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: aws.Int32(1), TooNewLogEventStartIndex: aws.Int32(2)}, stored: 1,
		},
		{
			name: "all too old", events: events([]int64{now - 20*day, now - 19*day}),
			wantInfo: &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: aws.Int32(2)}, stored: 0,
		},
		{
			name: "expired by retention", retention: 1, events: events([]int64{now - 15*day, now - 3*day, now - 2*day, now - hour}),
			wantInfo: &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: aws.Int32(1), ExpiredLogEventEndIndex: aws.Int32(3)}, stored: 1,
		},
		{
			name: "retention longer than 14 days adds nothing", retention: 30, events: events([]int64{now - 15*day, now - hour}),
			wantInfo: &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: aws.Int32(1)}, stored: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := start(t, localcloudwatch.Config{Now: fixedClock, Limits: tc.limits})
			mustCreate(t, c, "g", "s")
			if tc.retention > 0 {
				if _, err := c.PutRetentionPolicy(ctx(t), &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String("g"), RetentionInDays: aws.Int32(tc.retention)}); err != nil {
					t.Fatal(err)
				}
			}
			out, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), LogEvents: tc.events})
			if got := errCode(t, err); got != tc.wantCode {
				t.Fatalf("code %q, want %q (%v)", got, tc.wantCode, err)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("message %q does not contain %q", err.Error(), tc.wantMsg)
			}
			if err == nil {
				got := out.RejectedLogEventsInfo
				if (got == nil) != (tc.wantInfo == nil) || (got != nil &&
					(aws.ToInt32(got.TooOldLogEventEndIndex) != aws.ToInt32(tc.wantInfo.TooOldLogEventEndIndex) ||
						aws.ToInt32(got.TooNewLogEventStartIndex) != aws.ToInt32(tc.wantInfo.TooNewLogEventStartIndex) ||
						aws.ToInt32(got.ExpiredLogEventEndIndex) != aws.ToInt32(tc.wantInfo.ExpiredLogEventEndIndex) ||
						(got.TooOldLogEventEndIndex == nil) != (tc.wantInfo.TooOldLogEventEndIndex == nil) ||
						(got.TooNewLogEventStartIndex == nil) != (tc.wantInfo.TooNewLogEventStartIndex == nil) ||
						(got.ExpiredLogEventEndIndex == nil) != (tc.wantInfo.ExpiredLogEventEndIndex == nil))) {
					t.Fatalf("rejectedLogEventsInfo %+v, want %+v", got, tc.wantInfo)
				}
			}
			stored, _ := srv.Events("g", "s")
			if len(stored) != tc.stored {
				t.Fatalf("stored %d events, want %d", len(stored), tc.stored)
			}
			rej := srv.Stats().RejectedEvents
			if int(rej["tooOld"]+rej["tooNew"]+rej["expired"])+tc.stored != len(tc.events) && tc.wantCode == "" {
				t.Fatalf("rejection counters %v do not account for %d events", rej, len(tc.events))
			}
		})
	}
}

func TestNameRules(t *testing.T) {
	_, c := start(t, localcloudwatch.Config{Quotas: localcloudwatch.Unlimited()})
	long := strings.Repeat("a", 512)
	groups := []struct {
		name string
		want string
	}{
		{"/aws-like/but/ok", ""},
		{"/aws/lambda/fn", ""}, // only "aws/" at the very start is reserved
		{"aws/reserved", "InvalidParameterException"},
		{"ok.-_/#Name09", ""},
		{long, ""},
		{long + "a", "InvalidParameterException"},
		{"has space", "InvalidParameterException"},
		{"colon:", "InvalidParameterException"},
		{"star*", "InvalidParameterException"},
		{"ünicode", "InvalidParameterException"},
		{"", "InvalidParameterException"},
	}
	for _, g := range groups {
		_, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(g.name)})
		if got := errCode(t, err); got != g.want {
			t.Errorf("group %.20q: got %q want %q", g.name, got, g.want)
		}
	}
	streams := []struct {
		name string
		want string
	}{
		{"node.pod_ns_name-uid.container", ""},
		{"spaces and ünicode are fine", ""},
		{strings.Repeat("é", 512), ""},
		{strings.Repeat("é", 513), "InvalidParameterException"},
		{"a:b", "InvalidParameterException"},
		{"a*b", "InvalidParameterException"},
		{"", "InvalidParameterException"},
	}
	for _, s := range streams {
		_, err := c.CreateLogStream(ctx(t), &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String("/aws-like/but/ok"), LogStreamName: aws.String(s.name)})
		if got := errCode(t, err); got != s.want {
			t.Errorf("stream %.20q: got %q want %q", s.name, got, s.want)
		}
	}
}
