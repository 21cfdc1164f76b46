// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

func TestGroupAndStreamLifecycle(t *testing.T) {
	srv, c := start(t, localcloudwatch.Config{})
	mustCreate(t, c, "/k8s/app", "node-1.pod-a", "node-1.pod-b")

	_, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("/k8s/app")})
	if got := errCode(t, err); got != "ResourceAlreadyExistsException" {
		t.Fatalf("duplicate group: got %q", got)
	}
	_, err = c.CreateLogStream(ctx(t), &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String("/k8s/app"), LogStreamName: aws.String("node-1.pod-a")})
	if got := errCode(t, err); got != "ResourceAlreadyExistsException" {
		t.Fatalf("duplicate stream: got %q", got)
	}
	_, err = c.CreateLogStream(ctx(t), &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String("/missing"), LogStreamName: aws.String("s")})
	if got := errCode(t, err); got != "ResourceNotFoundException" {
		t.Fatalf("stream in missing group: got %q", got)
	}

	dg, err := c.DescribeLogGroups(ctx(t), &cloudwatchlogs.DescribeLogGroupsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(dg.LogGroups) != 1 || aws.ToString(dg.LogGroups[0].LogGroupName) != "/k8s/app" ||
		dg.LogGroups[0].LogGroupClass != types.LogGroupClassStandard ||
		aws.ToString(dg.LogGroups[0].LogGroupArn) != "arn:aws:logs:us-east-1:123456789012:log-group:/k8s/app" ||
		aws.ToString(dg.LogGroups[0].Arn) != "arn:aws:logs:us-east-1:123456789012:log-group:/k8s/app:*" ||
		dg.LogGroups[0].RetentionInDays != nil || aws.ToInt64(dg.LogGroups[0].CreationTime) == 0 {
		t.Fatalf("DescribeLogGroups: %+v", dg.LogGroups)
	}
	ds, err := c.DescribeLogStreams(ctx(t), &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String("/k8s/app")})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.LogStreams) != 2 || aws.ToString(ds.LogStreams[0].LogStreamName) != "node-1.pod-a" || ds.LogStreams[0].LastEventTimestamp != nil {
		t.Fatalf("DescribeLogStreams: %+v", ds.LogStreams)
	}

	now := time.Now().UnixMilli()
	put, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{
		LogGroupName: aws.String("/k8s/app"), LogStreamName: aws.String("node-1.pod-a"),
		LogEvents: events([]int64{now - 2000, now - 1000, now}, "one", "two", "three"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if put.RejectedLogEventsInfo != nil {
		t.Fatalf("unexpected rejection %+v", put.RejectedLogEventsInfo)
	}
	ge, err := c.GetLogEvents(ctx(t), &cloudwatchlogs.GetLogEventsInput{
		LogGroupName: aws.String("/k8s/app"), LogStreamName: aws.String("node-1.pod-a"), StartFromHead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ge.Events) != 3 || aws.ToString(ge.Events[0].Message) != "one" || aws.ToInt64(ge.Events[2].Timestamp) != now ||
		aws.ToInt64(ge.Events[0].IngestionTime) == 0 {
		t.Fatalf("GetLogEvents: %+v", ge.Events)
	}
	ds, err = c.DescribeLogStreams(ctx(t), &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String("/k8s/app"), LogStreamNamePrefix: aws.String("node-1.pod-a")})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.LogStreams) != 1 || aws.ToInt64(ds.LogStreams[0].FirstEventTimestamp) != now-2000 || aws.ToInt64(ds.LogStreams[0].LastEventTimestamp) != now {
		t.Fatalf("DescribeLogStreams after put: %+v", ds.LogStreams)
	}

	stored, err := srv.Events("/k8s/app", "node-1.pod-a")
	if err != nil || len(stored) != 3 || stored[1].Message != "two" {
		t.Fatalf("Events: %v %+v", err, stored)
	}
	st := srv.Stats()
	if st.EventsAccepted != 3 || st.PutLogEventsAccepted != 1 || st.Requests["PutLogEvents"] != 1 || st.Errors["ResourceAlreadyExistsException"] != 2 {
		t.Fatalf("Stats: %+v", st)
	}

	if _, err := c.DeleteLogStream(ctx(t), &cloudwatchlogs.DeleteLogStreamInput{LogGroupName: aws.String("/k8s/app"), LogStreamName: aws.String("node-1.pod-b")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteLogStream(ctx(t), &cloudwatchlogs.DeleteLogStreamInput{LogGroupName: aws.String("/k8s/app"), LogStreamName: aws.String("node-1.pod-b")})
	if got := errCode(t, err); got != "ResourceNotFoundException" {
		t.Fatalf("delete missing stream: %q", got)
	}
	if _, err := c.DeleteLogGroup(ctx(t), &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: aws.String("/k8s/app")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteLogGroup(ctx(t), &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: aws.String("/k8s/app")})
	if got := errCode(t, err); got != "ResourceNotFoundException" {
		t.Fatalf("delete missing group: %q", got)
	}
	if len(srv.Groups()) != 0 {
		t.Fatalf("groups left: %+v", srv.Groups())
	}
}

func TestPutLogEventsMissingTargets(t *testing.T) {
	_, c := start(t, localcloudwatch.Config{})
	mustCreate(t, c, "g")
	now := time.Now().UnixMilli()
	for _, tc := range []struct{ group, stream, want string }{
		{"missing", "s", "ResourceNotFoundException"},
		{"g", "missing", "ResourceNotFoundException"},
	} {
		_, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{
			LogGroupName: aws.String(tc.group), LogStreamName: aws.String(tc.stream), LogEvents: events([]int64{now}),
		})
		if got := errCode(t, err); got != tc.want {
			t.Errorf("%s/%s: got %q want %q", tc.group, tc.stream, got, tc.want)
		}
	}
}

func TestDescribePagination(t *testing.T) {
	_, c := start(t, localcloudwatch.Config{Quotas: localcloudwatch.Unlimited()})
	var streams []string
	for i := range 7 {
		streams = append(streams, fmt.Sprintf("s-%02d", i))
	}
	mustCreate(t, c, "paged", streams...)
	for i := range 5 {
		mustCreate(t, c, fmt.Sprintf("other-%d", i))
	}
	var got []string
	p := cloudwatchlogs.NewDescribeLogStreamsPaginator(c, &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String("paged")},
		func(o *cloudwatchlogs.DescribeLogStreamsPaginatorOptions) { o.Limit = 3 })
	pages := 0
	for p.HasMorePages() {
		out, err := p.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range out.LogStreams {
			got = append(got, aws.ToString(s.LogStreamName))
		}
	}
	if pages != 3 || fmt.Sprint(got) != fmt.Sprint(streams) {
		t.Fatalf("pages %d streams %v", pages, got)
	}
	var groups []string
	gp := cloudwatchlogs.NewDescribeLogGroupsPaginator(c, &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String("other-")},
		func(o *cloudwatchlogs.DescribeLogGroupsPaginatorOptions) { o.Limit = 2 })
	for gp.HasMorePages() {
		out, err := gp.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range out.LogGroups {
			groups = append(groups, aws.ToString(g.LogGroupName))
		}
	}
	if fmt.Sprint(groups) != "[other-0 other-1 other-2 other-3 other-4]" {
		t.Fatalf("groups %v", groups)
	}
}

func TestDescribeVariants(t *testing.T) {
	_, c := start(t, localcloudwatch.Config{})
	for _, g := range []string{"/k8s/App", "/k8s/audit", "/other/app-logs"} {
		mustCreate(t, c, g)
	}
	names := func(in *cloudwatchlogs.DescribeLogGroupsInput) string {
		t.Helper()
		out, err := c.DescribeLogGroups(ctx(t), in)
		if err != nil {
			return errCode(t, err)
		}
		var n []string
		for _, g := range out.LogGroups {
			n = append(n, aws.ToString(g.LogGroupName))
		}
		return fmt.Sprint(n)
	}
	for _, tc := range []struct {
		in   cloudwatchlogs.DescribeLogGroupsInput
		want string
	}{
		{cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePattern: aws.String("app")}, "[/k8s/App /other/app-logs]"},
		{cloudwatchlogs.DescribeLogGroupsInput{LogGroupIdentifiers: []string{"/k8s/audit", "arn:aws:logs:us-east-1:123456789012:log-group:/other/app-logs"}}, "[/k8s/audit /other/app-logs]"},
		{cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePattern: aws.String("app"), LogGroupNamePrefix: aws.String("/k8s")}, "InvalidParameterException"},
		{cloudwatchlogs.DescribeLogGroupsInput{Limit: aws.Int32(0)}, "InvalidParameterException"},
		{cloudwatchlogs.DescribeLogGroupsInput{NextToken: aws.String("bogus")}, "InvalidParameterException"},
	} {
		if got := names(&tc.in); got != tc.want {
			t.Errorf("%+v: got %s want %s", tc.in, got, tc.want)
		}
	}

	mustCreate(t, c, "/s", "a", "b", "c", "idle")
	now := time.Now().UnixMilli()
	for _, p := range []struct {
		stream string
		ts     int64
	}{{"a", now - 300}, {"b", now - 100}, {"c", now - 200}} {
		if _, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("/s"), LogStreamName: aws.String(p.stream), LogEvents: events([]int64{p.ts})}); err != nil {
			t.Fatal(err)
		}
	}
	var order []string
	p := cloudwatchlogs.NewDescribeLogStreamsPaginator(c, &cloudwatchlogs.DescribeLogStreamsInput{
		LogGroupIdentifier: aws.String("/s"), OrderBy: types.OrderByLastEventTime, Descending: aws.Bool(true),
	}, func(o *cloudwatchlogs.DescribeLogStreamsPaginatorOptions) { o.Limit = 1 })
	for p.HasMorePages() {
		out, err := p.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range out.LogStreams {
			order = append(order, aws.ToString(s.LogStreamName))
		}
	}
	if fmt.Sprint(order) != "[b c a idle]" {
		t.Fatalf("by last event time, descending: %v", order)
	}
	_, err := c.DescribeLogStreams(ctx(t), &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String("/s"), LogGroupIdentifier: aws.String("/s")})
	if got := errCode(t, err); got != "InvalidParameterException" {
		t.Fatalf("name and identifier: %q", got)
	}
}
