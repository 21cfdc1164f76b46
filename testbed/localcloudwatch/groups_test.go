// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"fmt"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

const kmsARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"

func describeGroup(t *testing.T, c *cloudwatchlogs.Client, name string) types.LogGroup {
	t.Helper()
	out, err := c.DescribeLogGroups(ctx(t), &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range out.LogGroups {
		if aws.ToString(g.LogGroupName) == name {
			return g
		}
	}
	t.Fatalf("group %s not described", name)
	return types.LogGroup{}
}

func TestRetentionPolicy(t *testing.T) {
	srv, c := start(t, localcloudwatch.Config{Quotas: localcloudwatch.Unlimited()})
	mustCreate(t, c, "r")
	for _, days := range localcloudwatch.RetentionDays {
		if _, err := c.PutRetentionPolicy(ctx(t), &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String("r"), RetentionInDays: aws.Int32(days)}); err != nil {
			t.Fatalf("%d days: %v", days, err)
		}
		if got := aws.ToInt32(describeGroup(t, c, "r").RetentionInDays); got != days {
			t.Fatalf("described retention %d, want %d", got, days)
		}
	}
	for _, days := range []int32{0, 2, 4, 15, 366, 3654, -1} {
		_, err := c.PutRetentionPolicy(ctx(t), &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String("r"), RetentionInDays: aws.Int32(days)})
		if got := errCode(t, err); got != "InvalidParameterException" {
			t.Errorf("%d days: got %q", days, got)
		}
	}
	_, err := c.PutRetentionPolicy(ctx(t), &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String("missing"), RetentionInDays: aws.Int32(7)})
	if got := errCode(t, err); got != "ResourceNotFoundException" {
		t.Errorf("missing group: %q", got)
	}
	if _, err := c.DeleteRetentionPolicy(ctx(t), &cloudwatchlogs.DeleteRetentionPolicyInput{LogGroupName: aws.String("r")}); err != nil {
		t.Fatal(err)
	}
	if g := describeGroup(t, c, "r"); g.RetentionInDays != nil {
		t.Fatalf("retention after delete: %d", *g.RetentionInDays)
	}
	if gi, _ := srv.Group("r"); gi.RetentionDays != 0 {
		t.Fatalf("Group().RetentionDays = %d", gi.RetentionDays)
	}
}

func TestLogGroupClassAndKMS(t *testing.T) {
	srv, c := start(t, localcloudwatch.Config{Quotas: localcloudwatch.Unlimited()})
	if _, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{
		LogGroupName: aws.String("ia"), LogGroupClass: types.LogGroupClassInfrequentAccess, KmsKeyId: aws.String(kmsARN),
	}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "std")
	g := describeGroup(t, c, "ia")
	if g.LogGroupClass != types.LogGroupClassInfrequentAccess || aws.ToString(g.KmsKeyId) != kmsARN {
		t.Fatalf("described %+v", g)
	}
	out, err := c.DescribeLogGroups(ctx(t), &cloudwatchlogs.DescribeLogGroupsInput{LogGroupClass: types.LogGroupClassStandard})
	if err != nil || len(out.LogGroups) != 1 || aws.ToString(out.LogGroups[0].LogGroupName) != "std" {
		t.Fatalf("filter by class: %v %+v", err, out)
	}
	_, err = c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("bad"), LogGroupClass: "GLACIER"})
	if got := errCode(t, err); got != "InvalidParameterException" {
		t.Fatalf("bad class: %q", got)
	}
	for _, key := range []string{"alias/mykey", "1234abcd-12ab", "arn:aws:kms:us-east-1:123:key/x", "arn:aws:s3:::bucket"} {
		_, err = c.AssociateKmsKey(ctx(t), &cloudwatchlogs.AssociateKmsKeyInput{LogGroupName: aws.String("std"), KmsKeyId: aws.String(key)})
		if got := errCode(t, err); got != "InvalidParameterException" {
			t.Fatalf("kms %q: %q", key, got)
		}
	}
	if _, err := c.AssociateKmsKey(ctx(t), &cloudwatchlogs.AssociateKmsKeyInput{LogGroupName: aws.String("std"), KmsKeyId: aws.String(kmsARN)}); err != nil {
		t.Fatal(err)
	}
	if gi, _ := srv.Group("std"); gi.KMSKeyID != kmsARN || gi.Class != "STANDARD" {
		t.Fatalf("Group(): %+v", gi)
	}
	_, err = c.AssociateKmsKey(ctx(t), &cloudwatchlogs.AssociateKmsKeyInput{LogGroupName: aws.String("missing"), KmsKeyId: aws.String(kmsARN)})
	if got := errCode(t, err); got != "ResourceNotFoundException" {
		t.Fatalf("kms on missing group: %q", got)
	}
	if _, err := c.DisassociateKmsKey(ctx(t), &cloudwatchlogs.DisassociateKmsKeyInput{LogGroupName: aws.String("std")}); err != nil {
		t.Fatal(err)
	}
	if g := describeGroup(t, c, "std"); g.KmsKeyId != nil {
		t.Fatalf("kms after disassociate: %s", *g.KmsKeyId)
	}
}

func TestTags(t *testing.T) {
	srv, c := start(t, localcloudwatch.Config{Quotas: localcloudwatch.Unlimited()})
	if _, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{
		LogGroupName: aws.String("t"), Tags: map[string]string{"team": "logs", "env": "dev"},
	}); err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(describeGroup(t, c, "t").LogGroupArn)
	if _, err := c.TagResource(ctx(t), &cloudwatchlogs.TagResourceInput{ResourceArn: aws.String(arn), Tags: map[string]string{"env": "prod", "k8s.cluster": "c1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TagLogGroup(ctx(t), &cloudwatchlogs.TagLogGroupInput{LogGroupName: aws.String("t"), Tags: map[string]string{"owner": "me@example.com"}}); err != nil { //nolint:staticcheck // the server implements the deprecated tag API too; this tests it
		t.Fatal(err)
	}
	want := map[string]string{"team": "logs", "env": "prod", "k8s.cluster": "c1", "owner": "me@example.com"}
	lr, err := c.ListTagsForResource(ctx(t), &cloudwatchlogs.ListTagsForResourceInput{ResourceArn: aws.String(arn + ":*")})
	if err != nil || !maps.Equal(lr.Tags, want) {
		t.Fatalf("ListTagsForResource: %v %v", err, lr)
	}
	ll, err := c.ListTagsLogGroup(ctx(t), &cloudwatchlogs.ListTagsLogGroupInput{LogGroupName: aws.String("t")}) //nolint:staticcheck // the server implements the deprecated tag API too; this tests it
	if err != nil || !maps.Equal(ll.Tags, want) {
		t.Fatalf("ListTagsLogGroup: %v %v", err, ll)
	}
	if gi, _ := srv.Group("t"); !maps.Equal(gi.Tags, want) {
		t.Fatalf("Group().Tags %v", gi.Tags)
	}
	if _, err := c.UntagResource(ctx(t), &cloudwatchlogs.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagLogGroup(ctx(t), &cloudwatchlogs.UntagLogGroupInput{LogGroupName: aws.String("t"), Tags: []string{"owner"}}); err != nil { //nolint:staticcheck // the server implements the deprecated tag API too; this tests it
		t.Fatal(err)
	}
	if gi, _ := srv.Group("t"); !maps.Equal(gi.Tags, map[string]string{"env": "prod", "k8s.cluster": "c1"}) {
		t.Fatalf("after untag %v", gi.Tags)
	}

	many := map[string]string{}
	for i := range 49 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	_, err = c.TagResource(ctx(t), &cloudwatchlogs.TagResourceInput{ResourceArn: aws.String(arn), Tags: many})
	if got := errCode(t, err); got != "TooManyTagsException" {
		t.Fatalf("51 tags: %q", got)
	}
	bad := []map[string]string{{"aws:reserved": "v"}, {"": "v"}, {"k": "bad*value"}, {"bad#key": "v"}}
	for _, tags := range bad {
		_, err = c.TagResource(ctx(t), &cloudwatchlogs.TagResourceInput{ResourceArn: aws.String(arn), Tags: tags})
		if got := errCode(t, err); got != "InvalidParameterException" {
			t.Errorf("tags %v: %q", tags, got)
		}
	}
	_, err = c.TagResource(ctx(t), &cloudwatchlogs.TagResourceInput{ResourceArn: aws.String(arn + "x"), Tags: map[string]string{"a": "b"}})
	if got := errCode(t, err); got != "ResourceNotFoundException" {
		t.Fatalf("tag missing group: %q", got)
	}
}

func TestLogGroupLimit(t *testing.T) {
	_, c := start(t, localcloudwatch.Config{Limits: localcloudwatch.Limits{MaxLogGroups: 2}})
	mustCreate(t, c, "a")
	mustCreate(t, c, "b")
	_, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("c")})
	if got := errCode(t, err); got != "LimitExceededException" {
		t.Fatalf("third group: %q", got)
	}
	_, err = c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("a")})
	if got := errCode(t, err); got != "ResourceAlreadyExistsException" {
		t.Fatalf("existing group at the limit: %q", got)
	}
}
