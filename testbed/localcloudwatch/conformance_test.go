// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/smithy-go"

	"github.com/otelcol-k8s/otelcol-k8s/internal/awsauth/mototest"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// A conformance check runs API calls and summarizes what it saw in one string, so the
// same check can be compared across servers.
type check struct {
	name string
	// motoChecks is false where moto does not implement the rule: the check must pass
	// on localcloudwatch and moto's answer is only logged.
	motoChecks bool
	want       string
	run        func(t *testing.T, c *cloudwatchlogs.Client) string
}

// code is "ok" for a nil error and the API error code otherwise.
func code(err error) string {
	if err == nil {
		return "ok"
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return "error: " + err.Error()
}

func createGroup(c *cloudwatchlogs.Client, t *testing.T, name string) string {
	_, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(name)})
	return code(err)
}

func createStream(c *cloudwatchlogs.Client, t *testing.T, group, name string) string {
	_, err := c.CreateLogStream(ctx(t), &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String(group), LogStreamName: aws.String(name)})
	return code(err)
}

func putEvents(c *cloudwatchlogs.Client, t *testing.T, group, stream string, evs []types.InputLogEvent) (*cloudwatchlogs.PutLogEventsOutput, string) {
	out, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream), LogEvents: evs})
	return out, code(err)
}

// readAll returns "message@offset" for every event of a stream, oldest first, where
// offset is the timestamp minus base.
func readAll(c *cloudwatchlogs.Client, t *testing.T, group, stream string, base int64) string {
	var got []string
	p := cloudwatchlogs.NewGetLogEventsPaginator(c, &cloudwatchlogs.GetLogEventsInput{
		LogGroupName: aws.String(group), LogStreamName: aws.String(stream), StartFromHead: aws.Bool(true),
	}, func(o *cloudwatchlogs.GetLogEventsPaginatorOptions) { o.Limit, o.StopOnDuplicateToken = 2, true })
	for pages := 0; p.HasMorePages() && pages < 50; pages++ {
		out, err := p.NextPage(ctx(t))
		if err != nil {
			return code(err)
		}
		for _, e := range out.Events {
			got = append(got, fmt.Sprintf("%s@%d", aws.ToString(e.Message), aws.ToInt64(e.Timestamp)-base))
		}
	}
	return strings.Join(got, ",")
}

func describeGroupNames(c *cloudwatchlogs.Client, t *testing.T, prefix string, limit int32) string {
	var names []string
	p := cloudwatchlogs.NewDescribeLogGroupsPaginator(c, &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String(prefix)},
		func(o *cloudwatchlogs.DescribeLogGroupsPaginatorOptions) { o.Limit = limit })
	for pages := 0; p.HasMorePages() && pages < 50; pages++ {
		out, err := p.NextPage(ctx(t))
		if err != nil {
			return code(err)
		}
		for _, g := range out.LogGroups {
			names = append(names, aws.ToString(g.LogGroupName))
		}
	}
	return strings.Join(names, ",")
}

func oneGroup(c *cloudwatchlogs.Client, t *testing.T, name string) (types.LogGroup, string) {
	out, err := c.DescribeLogGroups(ctx(t), &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String(name)})
	if err != nil {
		return types.LogGroup{}, code(err)
	}
	for _, g := range out.LogGroups {
		if aws.ToString(g.LogGroupName) == name {
			return g, "ok"
		}
	}
	return types.LogGroup{}, "not described"
}

func sortedTags(m map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k+"="+m[k])
	}
	return strings.Join(kv, ",")
}

func rejected(out *cloudwatchlogs.PutLogEventsOutput) string {
	if out == nil || out.RejectedLogEventsInfo == nil {
		return "none"
	}
	r := out.RejectedLogEventsInfo
	var parts []string
	if r.TooOldLogEventEndIndex != nil {
		parts = append(parts, "tooOld")
	}
	if r.TooNewLogEventStartIndex != nil {
		parts = append(parts, "tooNew")
	}
	if r.ExpiredLogEventEndIndex != nil {
		parts = append(parts, "expired")
	}
	return strings.Join(parts, "+")
}

var conformanceChecks = []check{
	{"create group twice", true, "ok ResourceAlreadyExistsException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		return createGroup(c, t, "/c/g") + " " + createGroup(c, t, "/c/g")
	}},
	{"stream in a missing group", true, "ResourceNotFoundException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		return createStream(c, t, "/c/missing", "s")
	}},
	{"create stream twice", true, "ok ok ResourceAlreadyExistsException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		return createGroup(c, t, "/c/g") + " " + createStream(c, t, "/c/g", "s") + " " + createStream(c, t, "/c/g", "s")
	}},
	{"delete missing group and stream", true, "ResourceNotFoundException ResourceNotFoundException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/g")
		_, e1 := c.DeleteLogGroup(ctx(t), &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: aws.String("/c/none")})
		_, e2 := c.DeleteLogStream(ctx(t), &cloudwatchlogs.DeleteLogStreamInput{LogGroupName: aws.String("/c/g"), LogStreamName: aws.String("none")})
		return code(e1) + " " + code(e2)
	}},
	{"describe groups by prefix, paged", true, "/c/a,/c/b,/c/c,/c/d,/c/e", func(t *testing.T, c *cloudwatchlogs.Client) string {
		for _, n := range []string{"/c/d", "/c/b", "/x/other", "/c/a", "/c/e", "/c/c"} {
			createGroup(c, t, n)
		}
		return describeGroupNames(c, t, "/c/", 2)
	}},
	{"describe limit over 50", true, "InvalidParameterException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		_, err := c.DescribeLogGroups(ctx(t), &cloudwatchlogs.DescribeLogGroupsInput{Limit: aws.Int32(51)})
		return code(err)
	}},
	{"group name longer than 512", true, "InvalidParameterException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		return createGroup(c, t, strings.Repeat("g", 513))
	}},
	{"retention set and deleted", true, "7 none", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/r")
		if _, err := c.PutRetentionPolicy(ctx(t), &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String("/c/r"), RetentionInDays: aws.Int32(7)}); err != nil {
			return code(err)
		}
		g, _ := oneGroup(c, t, "/c/r")
		first := strconv.FormatInt(int64(aws.ToInt32(g.RetentionInDays)), 10)
		if _, err := c.DeleteRetentionPolicy(ctx(t), &cloudwatchlogs.DeleteRetentionPolicyInput{LogGroupName: aws.String("/c/r")}); err != nil {
			return code(err)
		}
		g, _ = oneGroup(c, t, "/c/r")
		if g.RetentionInDays != nil {
			return first + " " + strconv.FormatInt(int64(*g.RetentionInDays), 10)
		}
		return first + " none"
	}},
	{"kms key given at creation", true, kmsARN, func(t *testing.T, c *cloudwatchlogs.Client) string {
		_, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("/c/k"), KmsKeyId: aws.String(kmsARN)})
		if err != nil {
			return code(err)
		}
		g, res := oneGroup(c, t, "/c/k")
		if res != "ok" {
			return res
		}
		return aws.ToString(g.KmsKeyId)
	}},
	{"tags through both APIs", true, "b=2,c=3,d=4 b=2,c=3,d=4", func(t *testing.T, c *cloudwatchlogs.Client) string {
		if _, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("/c/t"), Tags: map[string]string{"a": "1"}}); err != nil {
			return code(err)
		}
		g, _ := oneGroup(c, t, "/c/t")
		arn := aws.ToString(g.LogGroupArn)
		steps := []error{}
		_, err := c.TagLogGroup(ctx(t), &cloudwatchlogs.TagLogGroupInput{LogGroupName: aws.String("/c/t"), Tags: map[string]string{"b": "2"}}) //nolint:staticcheck // the server implements the deprecated tag API too; this tests it
		steps = append(steps, err)
		_, err = c.TagResource(ctx(t), &cloudwatchlogs.TagResourceInput{ResourceArn: aws.String(arn), Tags: map[string]string{"c": "3", "d": "4"}})
		steps = append(steps, err)
		_, err = c.UntagResource(ctx(t), &cloudwatchlogs.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{"a"}})
		steps = append(steps, err)
		for _, e := range steps {
			if e != nil {
				return code(e)
			}
		}
		l1, err := c.ListTagsLogGroup(ctx(t), &cloudwatchlogs.ListTagsLogGroupInput{LogGroupName: aws.String("/c/t")}) //nolint:staticcheck // the server implements the deprecated tag API too; this tests it
		if err != nil {
			return code(err)
		}
		l2, err := c.ListTagsForResource(ctx(t), &cloudwatchlogs.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
		if err != nil {
			return code(err)
		}
		return sortedTags(l1.Tags) + " " + sortedTags(l2.Tags)
	}},
	{"put and read back in order", true, "a@0,b@1,c@1,d@5,e@6", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/p")
		createStream(c, t, "/c/p", "s")
		base := time.Now().Add(-time.Minute).UnixMilli()
		for _, b := range [][]types.InputLogEvent{
			events([]int64{base, base + 1, base + 1}, "a", "b", "c"),
			events([]int64{base + 5, base + 6}, "d", "e"),
		} {
			if _, res := putEvents(c, t, "/c/p", "s", b); res != "ok" {
				return res
			}
		}
		return readAll(c, t, "/c/p", "s", base)
	}},
	{"filter by streams and time, paged", true, "s1:x1,s1:x2,s2:y1", func(t *testing.T, c *cloudwatchlogs.Client) string {
		got := filterThreeStreams(t, c)
		slices.Sort(got) // moto does not interleave streams; the order is checked below
		return strings.Join(got, ",")
	}},
	{"put to a missing group and stream", true, "ResourceNotFoundException ResourceNotFoundException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/g")
		now := time.Now().UnixMilli()
		_, r1 := putEvents(c, t, "/c/none", "s", events([]int64{now}))
		_, r2 := putEvents(c, t, "/c/g", "none", events([]int64{now}))
		return r1 + " " + r2
	}},
	{"events out of order", true, "InvalidParameterException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/o")
		createStream(c, t, "/c/o", "s")
		now := time.Now().UnixMilli()
		_, res := putEvents(c, t, "/c/o", "s", events([]int64{now, now - 1000}))
		return res
	}},
	{"too old and too new events rejected, the rest stored", true, "ok tooOld+tooNew ok@0", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/w")
		createStream(c, t, "/c/w", "s")
		now := time.Now().UnixMilli()
		out, res := putEvents(c, t, "/c/w", "s", events([]int64{now - 15*day, now, now + 3*hour}, "old", "ok", "new"))
		return res + " " + rejected(out) + " " + readAll(c, t, "/c/w", "s", now)
	}},
	{"describe streams by prefix, paged", true, "p-1,p-2,p-3", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/s")
		for _, s := range []string{"p-2", "q-1", "p-3", "p-1"} {
			createStream(c, t, "/c/s", s)
		}
		var names []string
		p := cloudwatchlogs.NewDescribeLogStreamsPaginator(c, &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String("/c/s"), LogStreamNamePrefix: aws.String("p-")},
			func(o *cloudwatchlogs.DescribeLogStreamsPaginatorOptions) { o.Limit = 2 })
		for pages := 0; p.HasMorePages() && pages < 20; pages++ {
			out, err := p.NextPage(ctx(t))
			if err != nil {
				return code(err)
			}
			for _, s := range out.LogStreams {
				names = append(names, aws.ToString(s.LogStreamName))
			}
		}
		return strings.Join(names, ",")
	}},
	{"order by LastEventTime with a prefix", true, "InvalidParameterException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/s")
		_, err := c.DescribeLogStreams(ctx(t), &cloudwatchlogs.DescribeLogStreamsInput{
			LogGroupName:        aws.String("/c/s"),
			LogStreamNamePrefix: aws.String("p"), OrderBy: types.OrderByLastEventTime,
		})
		return code(err)
	}},

	// Rules moto does not implement.
	{"group name characters", false, "InvalidParameterException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		return createGroup(c, t, "/c/has space")
	}},
	{"group name reserved prefix aws/", false, "InvalidParameterException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		return createGroup(c, t, "aws/reserved")
	}},
	{"stream name with a colon", false, "InvalidParameterException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/g")
		return createStream(c, t, "/c/g", "a:b")
	}},
	{"retention outside the allowed values", false, "InvalidParameterException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/r")
		_, err := c.PutRetentionPolicy(ctx(t), &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String("/c/r"), RetentionInDays: aws.Int32(2)})
		return code(err)
	}},
	{"more than 10,000 events", false, "InvalidParameterException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/b")
		createStream(c, t, "/c/b", "s")
		_, res := putEvents(c, t, "/c/b", "s", batchOfSize(10_001, 1, time.Now().UnixMilli()))
		return res
	}},
	{"batch over 1 MiB counting 26 bytes per event", false, "InvalidParameterException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/b")
		createStream(c, t, "/c/b", "s")
		_, res := putEvents(c, t, "/c/b", "s", batchOfSize(10_000, 79, time.Now().UnixMilli()))
		return res
	}},
	{"batch spanning more than 24 hours", false, "InvalidParameterException", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/b")
		createStream(c, t, "/c/b", "s")
		now := time.Now().UnixMilli()
		_, res := putEvents(c, t, "/c/b", "s", events([]int64{now - 25*hour, now}))
		return res
	}},
	{"too old index is exclusive, as AWS answers", false, "1", func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/w")
		createStream(c, t, "/c/w", "s")
		out, res := putEvents(c, t, "/c/w", "s", events([]int64{time.Now().UnixMilli() - 15*day}))
		if res != "ok" || out.RejectedLogEventsInfo == nil {
			return res + " " + rejected(out)
		}
		return strconv.FormatInt(int64(aws.ToInt32(out.RejectedLogEventsInfo.TooOldLogEventEndIndex)), 10)
	}},
	{"filter interleaves streams by time", false, "s1:x1,s2:y1,s1:x2", func(t *testing.T, c *cloudwatchlogs.Client) string {
		return strings.Join(filterThreeStreams(t, c), ",")
	}},
	{"log group class", false, "INFREQUENT_ACCESS", func(t *testing.T, c *cloudwatchlogs.Client) string {
		_, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("/c/ia"), LogGroupClass: types.LogGroupClassInfrequentAccess})
		if err != nil {
			return code(err)
		}
		g, _ := oneGroup(c, t, "/c/ia")
		return string(g.LogGroupClass)
	}},
	{"AssociateKmsKey", false, "ok " + kmsARN, func(t *testing.T, c *cloudwatchlogs.Client) string {
		createGroup(c, t, "/c/k")
		_, err := c.AssociateKmsKey(ctx(t), &cloudwatchlogs.AssociateKmsKeyInput{LogGroupName: aws.String("/c/k"), KmsKeyId: aws.String(kmsARN)})
		g, _ := oneGroup(c, t, "/c/k")
		return code(err) + " " + aws.ToString(g.KmsKeyId)
	}},
}

// filterThreeStreams writes three streams and filters two of them by time range, two
// events per page.
func filterThreeStreams(t *testing.T, c *cloudwatchlogs.Client) []string {
	createGroup(c, t, "/c/f")
	base := time.Now().Add(-time.Minute).UnixMilli()
	for s, msgs := range map[string][]string{"s1": {"x0", "x1", "x2"}, "s2": {"y0", "y1"}, "s3": {"z0", "z1"}} {
		createStream(c, t, "/c/f", s)
		var ts []int64
		for i := range msgs {
			ts = append(ts, base+int64(10*i)+int64(s[1]-'0'))
		}
		if _, res := putEvents(c, t, "/c/f", s, events(ts, msgs...)); res != "ok" {
			return []string{res}
		}
	}
	var got []string
	p := cloudwatchlogs.NewFilterLogEventsPaginator(c, &cloudwatchlogs.FilterLogEventsInput{
		LogGroupName: aws.String("/c/f"), LogStreamNames: []string{"s1", "s2"}, StartTime: aws.Int64(base + 5), EndTime: aws.Int64(base + 21),
	}, func(o *cloudwatchlogs.FilterLogEventsPaginatorOptions) { o.Limit = 2 })
	for pages := 0; p.HasMorePages() && pages < 20; pages++ {
		out, err := p.NextPage(ctx(t))
		if err != nil {
			return []string{code(err)}
		}
		for _, e := range out.Events {
			got = append(got, aws.ToString(e.LogStreamName)+":"+aws.ToString(e.Message))
		}
	}
	return got
}

// TestConformance runs the same checks against localcloudwatch and moto (API semantics: no
// quotas in the way).
func TestConformance(t *testing.T) {
	srv, local := start(t, localcloudwatch.Config{Quotas: localcloudwatch.Unlimited()})
	t.Run("localcloudwatch", func(t *testing.T) {
		for _, ch := range conformanceChecks {
			t.Run(ch.name, func(t *testing.T) {
				srv.Reset()
				if got := ch.run(t, local); got != ch.want {
					t.Fatalf("got %q, want %q", got, ch.want)
				}
			})
		}
	})
	t.Run("moto", func(t *testing.T) {
		c := newClient(mototest.Endpoint(t), aws.NopRetryer{})
		for _, ch := range conformanceChecks {
			t.Run(ch.name, func(t *testing.T) {
				mototest.Endpoint(t) // reset
				got := ch.run(t, c)
				switch {
				case got == ch.want && !ch.motoChecks:
					t.Logf("moto now implements this rule too")
				case got != ch.want && ch.motoChecks:
					t.Fatalf("moto disagrees: got %q, want %q", got, ch.want)
				case got != ch.want:
					t.Logf("moto gap (expected): got %q, AWS answers %q", got, ch.want)
				}
			})
		}
	})
}
