// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

func put(t *testing.T, c *cloudwatchlogs.Client, group, stream string, ts []int64, msgs ...string) {
	t.Helper()
	out, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream), LogEvents: events(ts, msgs...)})
	if err != nil {
		t.Fatal(err)
	}
	if out.RejectedLogEventsInfo != nil {
		t.Fatalf("rejected %+v", out.RejectedLogEventsInfo)
	}
}

func TestGetLogEventsPaging(t *testing.T) {
	srv, c := start(t, localcloudwatch.Config{})
	mustCreate(t, c, "g", "s")
	base := time.Now().Add(-time.Hour).UnixMilli()
	var want []string
	for b := range 3 {
		var ts []int64
		var msgs []string
		for i := range 9 {
			n := b*9 + i
			ts = append(ts, base+int64(n))
			msgs = append(msgs, fmt.Sprintf("m%02d", n))
		}
		put(t, c, "g", "s", ts, msgs...)
		want = append(want, msgs...)
	}

	var got []string
	p := cloudwatchlogs.NewGetLogEventsPaginator(c, &cloudwatchlogs.GetLogEventsInput{
		LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), StartFromHead: aws.Bool(true),
	}, func(o *cloudwatchlogs.GetLogEventsPaginatorOptions) { o.Limit, o.StopOnDuplicateToken = 10, true })
	for pages := 0; p.HasMorePages(); pages++ {
		if pages > 10 {
			t.Fatal("paginator does not stop")
		}
		out, err := p.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range out.Events {
			got = append(got, aws.ToString(e.Message))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("forward paging got %v", got)
	}

	// Default direction: the latest events, then backwards.
	out, err := c.GetLogEvents(ctx(t), &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), Limit: aws.Int32(10)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Events) != 10 || aws.ToString(out.Events[0].Message) != "m17" || aws.ToString(out.Events[9].Message) != "m26" {
		t.Fatalf("tail page %v", out.Events)
	}
	back, err := c.GetLogEvents(ctx(t), &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), Limit: aws.Int32(10), NextToken: out.NextBackwardToken})
	if err != nil || len(back.Events) != 10 || aws.ToString(back.Events[0].Message) != "m07" || aws.ToString(back.Events[9].Message) != "m16" {
		t.Fatalf("backward page %v %v", err, back)
	}

	// Time range [start, end).
	rng, err := c.GetLogEvents(ctx(t), &cloudwatchlogs.GetLogEventsInput{
		LogGroupName: aws.String("g"), LogStreamName: aws.String("s"),
		StartTime: aws.Int64(base + 5), EndTime: aws.Int64(base + 8), StartFromHead: aws.Bool(true),
	})
	if err != nil || len(rng.Events) != 3 || aws.ToString(rng.Events[0].Message) != "m05" {
		t.Fatalf("range %v %v", err, rng)
	}

	// A batch older than what is stored: GetLogEvents sorts by time, Events keeps arrival order.
	put(t, c, "g", "s", []int64{base - 10}, "late")
	all, err := c.GetLogEvents(ctx(t), &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), StartFromHead: aws.Bool(true)})
	if err != nil || aws.ToString(all.Events[0].Message) != "late" || len(all.Events) != 28 {
		t.Fatalf("sorted read %v %v", err, all.Events[:1])
	}
	stored, _ := srv.Events("g", "s")
	if stored[27].Message != "late" {
		t.Fatalf("arrival order lost: %v", stored[27])
	}
	infos, _ := srv.Streams("g")
	if infos[0].OutOfOrderBatches != 1 || infos[0].Events != 28 || infos[0].FirstEventTimestamp != base-10 {
		t.Fatalf("stream info %+v", infos[0])
	}

	_, err = c.GetLogEvents(ctx(t), &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), NextToken: aws.String("garbage")})
	if got := errCode(t, err); got != "InvalidParameterException" {
		t.Fatalf("bad token: %q", got)
	}
	_, err = c.GetLogEvents(ctx(t), &cloudwatchlogs.GetLogEventsInput{LogGroupIdentifier: aws.String("arn:aws:logs:us-east-1:123456789012:log-group:g:*"), LogStreamName: aws.String("s")})
	if err != nil {
		t.Fatalf("by identifier: %v", err)
	}
}

func TestFilterLogEvents(t *testing.T) {
	_, c := start(t, localcloudwatch.Config{Quotas: localcloudwatch.Unlimited()})
	mustCreate(t, c, "f", "a-1", "a-2", "b-1")
	base := time.Now().Add(-time.Hour).UnixMilli()
	put(t, c, "f", "a-1", []int64{base, base + 2, base + 4}, "INFO start", "ERROR boom", "debug detail")
	put(t, c, "f", "a-2", []int64{base + 1, base + 3}, "WARN slow", "INFO ok")
	put(t, c, "f", "b-1", []int64{base + 2}, "ERROR other")

	collect := func(in *cloudwatchlogs.FilterLogEventsInput) []string {
		t.Helper()
		in.LogGroupName = aws.String("f")
		var got []string
		p := cloudwatchlogs.NewFilterLogEventsPaginator(c, in, func(o *cloudwatchlogs.FilterLogEventsPaginatorOptions) {
			o.Limit = aws.ToInt32(in.Limit)
		})
		for pages := 0; p.HasMorePages(); pages++ {
			if pages > 20 {
				t.Fatal("paginator does not stop")
			}
			out, err := p.NextPage(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range out.Events {
				got = append(got, aws.ToString(e.LogStreamName)+":"+aws.ToString(e.Message))
			}
		}
		return got
	}
	cases := []struct {
		name string
		in   cloudwatchlogs.FilterLogEventsInput
		want []string
	}{
		{
			"all, paged by 2",
			cloudwatchlogs.FilterLogEventsInput{Limit: aws.Int32(2)},
			[]string{"a-1:INFO start", "a-2:WARN slow", "a-1:ERROR boom", "b-1:ERROR other", "a-2:INFO ok", "a-1:debug detail"},
		},
		{
			"by stream names",
			cloudwatchlogs.FilterLogEventsInput{LogStreamNames: []string{"a-2", "b-1"}},
			[]string{"a-2:WARN slow", "b-1:ERROR other", "a-2:INFO ok"},
		},
		{
			"by prefix",
			cloudwatchlogs.FilterLogEventsInput{LogStreamNamePrefix: aws.String("a-")},
			[]string{"a-1:INFO start", "a-2:WARN slow", "a-1:ERROR boom", "a-2:INFO ok", "a-1:debug detail"},
		},
		{
			"time range inclusive",
			cloudwatchlogs.FilterLogEventsInput{StartTime: aws.Int64(base + 1), EndTime: aws.Int64(base + 3)},
			[]string{"a-2:WARN slow", "a-1:ERROR boom", "b-1:ERROR other", "a-2:INFO ok"},
		},
		{
			"term",
			cloudwatchlogs.FilterLogEventsInput{FilterPattern: aws.String("ERROR")},
			[]string{"a-1:ERROR boom", "b-1:ERROR other"},
		},
		{
			"any of",
			cloudwatchlogs.FilterLogEventsInput{FilterPattern: aws.String("?WARN ?boom")},
			[]string{"a-2:WARN slow", "a-1:ERROR boom"},
		},
		{
			"phrase and exclusion",
			cloudwatchlogs.FilterLogEventsInput{FilterPattern: aws.String(`"INFO ok" -start`)},
			[]string{"a-2:INFO ok"},
		},
		{
			"latest first",
			cloudwatchlogs.FilterLogEventsInput{StartFromHead: aws.Bool(false), Limit: aws.Int32(4)},
			[]string{"a-1:debug detail", "a-2:INFO ok", "b-1:ERROR other", "a-1:ERROR boom", "a-2:WARN slow", "a-1:INFO start"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := collect(&tc.in); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
	for _, in := range []*cloudwatchlogs.FilterLogEventsInput{
		{LogGroupName: aws.String("f"), LogStreamNames: []string{"a-1"}, LogStreamNamePrefix: aws.String("a")},
		{LogGroupName: aws.String("f"), FilterPattern: aws.String(`{ $.level = "ERROR" }`)},
		{LogGroupName: aws.String("f"), NextToken: aws.String("nope")},
	} {
		_, err := c.FilterLogEvents(ctx(t), in)
		if got := errCode(t, err); got != "InvalidParameterException" {
			t.Errorf("%+v: %q", in, got)
		}
	}
	_, err := c.FilterLogEvents(ctx(t), &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String("missing")})
	if got := errCode(t, err); got != "ResourceNotFoundException" {
		t.Errorf("missing group: %q", got)
	}
}
