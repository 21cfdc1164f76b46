// SPDX-License-Identifier: Apache-2.0

package sender

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"go.uber.org/zap"
)

// scriptedAPI answers each operation from a list of errors, then succeeds; it records calls.
type scriptedAPI struct {
	API
	mu      sync.Mutex
	answers map[string][]error
	calls   map[string]int
	created []*cloudwatchlogs.CreateLogGroupInput
}

func (a *scriptedAPI) next(op string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls[op]++
	if l := a.answers[op]; len(l) > 0 {
		a.answers[op] = l[1:]
		return l[0]
	}
	return nil
}

func (a *scriptedAPI) count(op string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[op]
}

func (a *scriptedAPI) lastCreate() *cloudwatchlogs.CreateLogGroupInput {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.created[len(a.created)-1]
}

func (a *scriptedAPI) PutLogEvents(context.Context, *cloudwatchlogs.PutLogEventsInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutLogEventsOutput, error) {
	return &cloudwatchlogs.PutLogEventsOutput{}, a.next("PutLogEvents")
}

func (a *scriptedAPI) CreateLogStream(context.Context, *cloudwatchlogs.CreateLogStreamInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogStreamOutput, error) {
	return &cloudwatchlogs.CreateLogStreamOutput{}, a.next("CreateLogStream")
}

func (a *scriptedAPI) CreateLogGroup(_ context.Context, in *cloudwatchlogs.CreateLogGroupInput, _ ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogGroupOutput, error) {
	a.mu.Lock()
	a.created = append(a.created, in)
	a.mu.Unlock()
	return &cloudwatchlogs.CreateLogGroupOutput{}, a.next("CreateLogGroup")
}

func (a *scriptedAPI) DescribeLogGroups(_ context.Context, in *cloudwatchlogs.DescribeLogGroupsInput, _ ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.DescribeLogGroupsOutput, error) {
	return &cloudwatchlogs.DescribeLogGroupsOutput{LogGroups: []types.LogGroup{{LogGroupName: in.LogGroupNamePrefix, LogGroupArn: aws.String("arn:g")}}}, a.next("DescribeLogGroups")
}

func (a *scriptedAPI) PutRetentionPolicy(context.Context, *cloudwatchlogs.PutRetentionPolicyInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutRetentionPolicyOutput, error) {
	return &cloudwatchlogs.PutRetentionPolicyOutput{}, a.next("PutRetentionPolicy")
}

func (a *scriptedAPI) ListTagsForResource(context.Context, *cloudwatchlogs.ListTagsForResourceInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.ListTagsForResourceOutput, error) {
	return &cloudwatchlogs.ListTagsForResourceOutput{}, a.next("ListTagsForResource")
}

func (a *scriptedAPI) AssociateKmsKey(context.Context, *cloudwatchlogs.AssociateKmsKeyInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.AssociateKmsKeyOutput, error) {
	return &cloudwatchlogs.AssociateKmsKeyOutput{}, a.next("AssociateKmsKey")
}

func (a *scriptedAPI) TagResource(context.Context, *cloudwatchlogs.TagResourceInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.TagResourceOutput, error) {
	return &cloudwatchlogs.TagResourceOutput{}, a.next("TagResource")
}

// TestTransientAWSConditionsDropNothing: none of the conditions AWS produces around a new
// group (concurrent creation, eventual consistency, throttled control plane, a KMS key or tag
// permission problem, an unknown 4xx code) drops the batch; a settings problem does not hold
// the send back.
func TestTransientAWSConditionsDropNothing(t *testing.T) {
	notFound, aborted := apiErr("ResourceNotFoundException"), apiErr("OperationAbortedException")
	tests := []struct {
		name      string
		answers   map[string][]error
		settings  GroupSettings
		wantPuts  int
		wantPlain bool // the group was finally created without its settings
	}{
		{
			name: "concurrent creation of the group (rollout on every node)",
			answers: map[string][]error{
				"PutLogEvents":    {notFound},
				"CreateLogStream": {notFound, notFound},
				"CreateLogGroup":  {aborted, apiErr("ResourceAlreadyExistsException")},
			},
			wantPuts: 2,
		},
		{
			name: "eventual consistency after create",
			answers: map[string][]error{
				"PutLogEvents": {notFound, notFound, notFound, notFound, notFound},
			},
			wantPuts: 6,
		},
		{
			name: "throttled control plane",
			answers: map[string][]error{
				"PutLogEvents":    {notFound},
				"CreateLogStream": {apiErr("ThrottlingException"), apiErr("ThrottlingException")},
			},
			wantPuts: 2,
		},
		{
			name: "KMS key refused on a new group",
			answers: map[string][]error{
				"PutLogEvents":    {notFound},
				"CreateLogStream": {notFound, notFound},
				"CreateLogGroup":  {apiErr("AccessDeniedException")},
			},
			settings:  GroupSettings{KMSKeyID: "arn:aws:kms:us-east-1:1:key/x", RetentionDays: 7},
			wantPuts:  2,
			wantPlain: true,
		},
		{
			name: "no logs:TagResource permission",
			answers: map[string][]error{
				"PutLogEvents":    {notFound},
				"CreateLogStream": {notFound, notFound},
				"CreateLogGroup":  {apiErr("AccessDeniedException")},
			},
			settings:  GroupSettings{Tags: map[string]string{"team": "a"}},
			wantPuts:  2,
			wantPlain: true,
		},
		{
			name:     "unknown 4xx code",
			answers:  map[string][]error{"PutLogEvents": {apiErr("BrandNewException"), httpErr(400)}},
			wantPuts: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &scriptedAPI{answers: tt.answers, calls: map[string]int{}}
			s := New(api, Config{
				Settings: tt.settings, Backoff: Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond},
				CreateGroupRate: 1000, CreateStreamRate: 1000,
			}, &countingObserver{}, zap.NewNop())
			defer s.Stop()
			ctx := WithDeadline(context.Background(), time.Now().Add(10*time.Second))
			_, err := s.Put(ctx, "g", "s", []types.InputLogEvent{{Message: aws.String("m"), Timestamp: aws.Int64(1)}})
			if err != nil {
				t.Fatalf("Put: %v", err)
			}
			if got := api.count("PutLogEvents"); got != tt.wantPuts {
				t.Fatalf("PutLogEvents calls = %d, want %d", got, tt.wantPuts)
			}
			if tt.wantPlain {
				last := api.lastCreate()
				if last.KmsKeyId != nil || last.Tags != nil {
					t.Fatalf("last CreateLogGroup still carried settings: %+v", last)
				}
			}
		})
	}
}

// TestGroupCreatedElsewhereIsNotCreated: a node that finds the group missing looks again after
// its random wait and, when another node has created the group meanwhile, makes no
// CreateLogGroup call; one that still finds it missing creates it, once.
func TestGroupCreatedElsewhereIsNotCreated(t *testing.T) {
	notFound := apiErr("ResourceNotFoundException")
	for _, tc := range []struct {
		name        string
		streamNF    int // CreateLogStream answers NotFound this many times
		wantCreates int
	}{{"created by another node meanwhile", 1, 0}, {"still missing", 2, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			api := &scriptedAPI{answers: map[string][]error{"PutLogEvents": {notFound, notFound, notFound}}, calls: map[string]int{}}
			for range tc.streamNF {
				api.answers["CreateLogStream"] = append(api.answers["CreateLogStream"], notFound)
			}
			s := New(api, Config{Backoff: Backoff{Initial: 5 * time.Millisecond, Max: 10 * time.Millisecond}, CreateGroupRate: 1000, CreateStreamRate: 1000}, &countingObserver{}, zap.NewNop())
			defer s.Stop()
			for _, stream := range []string{"a", "b", "c"} {
				ctx := WithDeadline(context.Background(), time.Now().Add(10*time.Second))
				if _, err := s.Put(ctx, "g", stream, []types.InputLogEvent{{Message: aws.String("m"), Timestamp: aws.Int64(1)}}); err != nil {
					t.Fatalf("Put %s: %v", stream, err)
				}
			}
			if got := api.count("CreateLogGroup"); got != tc.wantCreates {
				t.Fatalf("CreateLogGroup calls = %d, want %d", got, tc.wantCreates)
			}
		})
	}
}

// TestStopEndsRetries: a send retrying through an outage returns promptly after Stop.
func TestStopEndsRetries(t *testing.T) {
	api := &scriptedAPI{answers: map[string][]error{}, calls: map[string]int{}}
	for range 1000 {
		api.answers["PutLogEvents"] = append(api.answers["PutLogEvents"], httpErr(503))
	}
	s := New(api, Config{Backoff: Backoff{Initial: time.Second, Max: time.Minute}, CreateGroupRate: 1, CreateStreamRate: 1}, &countingObserver{}, zap.NewNop())
	done := make(chan error, 1)
	go func() {
		_, err := s.Put(context.Background(), "g", "s", []types.InputLogEvent{{Message: aws.String("m"), Timestamp: aws.Int64(1)}})
		done <- err
	}()
	s.Stop()
	select {
	case err := <-done:
		if err == nil || classify(err) != classCancelled {
			t.Fatalf("Put after Stop = %v, want a cancellation", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Put still retrying 5 s after Stop")
	}
}
