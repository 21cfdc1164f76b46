// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/otelcol-k8s/otelcol-k8s/internal/awsauth/mototest"
)

// staticTestCredentials runs before the package's tests (tests.goleak.setup in metadata.yaml):
// the standard chain finds static test credentials and none of the machine's configuration,
// for the generated lifecycle test and every test that does not call awsEnv.
func staticTestCredentials() {
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		_ = os.Setenv(k, v)
	}
}

// stopTestServers runs after the package's tests, before goroutines are checked
// (tests.goleak.teardown): the shared moto server and the local server binary built for them.
func stopTestServers(int) {
	mototest.Stop()
	removeLocalServerBinary()
}

// backend is a CloudWatch Logs implementation the integration tests run against.
type backend struct {
	name     string
	endpoint string
	local    *localServer // nil for moto
}

// awsEnv points the standard credential chain at static test credentials and away from any
// shared configuration of the machine.
func awsEnv(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// startMoto gives the test the moto server shared by this package's tests, reset. Without
// moto the test is skipped, except in CI (CI=true) where it fails.
func startMoto(t *testing.T) *backend {
	t.Helper()
	return &backend{name: "moto", endpoint: mototest.Endpoint(t)}
}

// client returns an SDK client for inspecting the backend (with the SDK's own retries).
func (b *backend) client() *cloudwatchlogs.Client {
	return cloudwatchlogs.New(cloudwatchlogs.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(b.endpoint),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		RetryMaxAttempts: 10,
	})
}

// groupInfo is what the tests check about a group, read through the public API.
type groupInfo struct {
	retention int32
	tags      map[string]string
	class     string
	streams   map[string][]types.OutputLogEvent // every event of every stream, by GetLogEvents
	filtered  int                               // events FilterLogEvents returns for the group
}

func (b *backend) inspect(t *testing.T) map[string]*groupInfo {
	t.Helper()
	ctx := context.Background()
	c := b.client()
	out := map[string]*groupInfo{}
	gp := cloudwatchlogs.NewDescribeLogGroupsPaginator(c, &cloudwatchlogs.DescribeLogGroupsInput{})
	for gp.HasMorePages() {
		page, err := gp.NextPage(ctx)
		if err != nil {
			t.Fatalf("DescribeLogGroups: %v", err)
		}
		for _, g := range page.LogGroups {
			name := aws.ToString(g.LogGroupName)
			gi := &groupInfo{retention: aws.ToInt32(g.RetentionInDays), class: string(g.LogGroupClass), streams: map[string][]types.OutputLogEvent{}}
			arn := aws.ToString(g.LogGroupArn)
			if arn == "" {
				arn = strings.TrimSuffix(aws.ToString(g.Arn), ":*")
			}
			tags, err := c.ListTagsForResource(ctx, &cloudwatchlogs.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
			if err != nil {
				t.Fatalf("ListTagsForResource %s: %v", arn, err)
			}
			gi.tags = tags.Tags
			sp := cloudwatchlogs.NewDescribeLogStreamsPaginator(c, &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String(name)})
			for sp.HasMorePages() {
				sPage, err := sp.NextPage(ctx)
				if err != nil {
					t.Fatalf("DescribeLogStreams %s: %v", name, err)
				}
				for _, s := range sPage.LogStreams {
					gi.streams[aws.ToString(s.LogStreamName)] = b.events(t, name, aws.ToString(s.LogStreamName))
				}
			}
			fp := cloudwatchlogs.NewFilterLogEventsPaginator(c, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(name)})
			for fp.HasMorePages() {
				fPage, err := fp.NextPage(ctx)
				if err != nil {
					t.Fatalf("FilterLogEvents %s: %v", name, err)
				}
				gi.filtered += len(fPage.Events)
			}
			out[name] = gi
		}
	}
	return out
}

func (b *backend) events(t *testing.T, group, stream string) []types.OutputLogEvent {
	t.Helper()
	var all []types.OutputLogEvent
	p := cloudwatchlogs.NewGetLogEventsPaginator(b.client(), &cloudwatchlogs.GetLogEventsInput{
		LogGroupName: aws.String(group), LogStreamName: aws.String(stream), StartFromHead: aws.Bool(true),
	}, func(o *cloudwatchlogs.GetLogEventsPaginatorOptions) { o.StopOnDuplicateToken = true })
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("GetLogEvents %s/%s: %v", group, stream, err)
		}
		all = append(all, page.Events...)
		if len(page.Events) == 0 {
			break
		}
	}
	return all
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// serveOnLoopback serves srv on a free loopback port until the test ends and returns its URL.
func serveOnLoopback(t *testing.T, srv *http.Server) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
}

// storedEvents returns every event the local server holds, in all groups and streams.
func (b *backend) storedEvents(t *testing.T) []localEvent {
	t.Helper()
	var all []localEvent
	for _, g := range b.local.Groups() {
		streams, err := b.local.Streams(g.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range streams {
			events, err := b.local.Events(g.Name, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, events...)
		}
	}
	return all
}
