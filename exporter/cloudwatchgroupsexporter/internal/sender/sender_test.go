// SPDX-License-Identifier: Apache-2.0

package sender

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"go.uber.org/zap"
)

func apiErr(code string) error { return &smithy.GenericAPIError{Code: code, Message: "m"} }

func httpErr(status int) error {
	return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: errors.New("x")}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want class
	}{
		{apiErr("ResourceNotFoundException"), classNotFound},
		{fmt.Errorf("wrapped: %w", apiErr("ResourceAlreadyExistsException")), classExists},
		{apiErr("ThrottlingException"), classThrottle},
		{apiErr("ServiceUnavailableException"), classTransient},
		{apiErr("InvalidParameterException"), classPermanent},
		{apiErr("AccessDeniedException"), classTransient},
		{apiErr("UnrecognizedClientException"), classTransient},
		{apiErr("ExpiredTokenException"), classTransient},
		{apiErr("OperationAbortedException"), classTransient},
		{apiErr("SomeNewException"), classTransient},
		{apiErr("LimitExceededException"), classPermanent},
		{&PermanentError{Err: apiErr("AccessDeniedException")}, classPermanent},
		{fmt.Errorf("op: %w", errStopping), classCancelled},
		{credErr{errors.New("get identity: sts: 400 IDPCommunicationError")}, classTransient},
		{httpErr(503), classTransient},
		{httpErr(429), classThrottle},
		{httpErr(400), classTransient},
		{errors.New("connection reset by peer"), classTransient},
		{httpErr(0), classTransient},
		{&smithyhttp.ResponseError{Response: &smithyhttp.Response{}, Err: errors.New("dial tcp: connection refused")}, classTransient},
		// An HTTP client timeout wraps DeadlineExceeded; only the caller's context ending
		// is a cancellation (classifyCtx).
		{context.DeadlineExceeded, classTransient},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("classify(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestClassifyServerDown classifies the error the real SDK client returns when nothing
// listens at the endpoint: the local server down, or CloudWatch unreachable, is transient.
func TestClassifyServerDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	client := cloudwatchlogs.New(cloudwatchlogs.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(endpoint),
		Credentials:      credentials.NewStaticCredentialsProvider("id", "secret", ""),
		RetryMaxAttempts: 1,
	})
	_, err = client.PutLogEvents(t.Context(), &cloudwatchlogs.PutLogEventsInput{
		LogGroupName:  aws.String("g"),
		LogStreamName: aws.String("s"),
		LogEvents:     []types.InputLogEvent{{Message: aws.String("m"), Timestamp: aws.Int64(1)}},
	})
	if err == nil {
		t.Fatal("PutLogEvents to a closed port succeeded")
	}
	if got := classify(err); got != classTransient {
		t.Fatalf("classify(%v) = %d, want transient (%d)", err, got, classTransient)
	}
}

type credErr struct{ error }

func (credErr) CredentialError() bool { return true }

func TestClassifyCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if got := classifyCtx(ctx, context.DeadlineExceeded); got != classTransient {
		t.Fatalf("live context: %d", got)
	}
	cancel()
	if got := classifyCtx(ctx, apiErr("ThrottlingException")); got != classCancelled {
		t.Fatalf("canceled context: %d", got)
	}
}

// TestClassifyClientTimeout classifies the error of a real SDK call whose HTTP client timed
// out: transient, not a cancellation by the caller.
func TestClassifyClientTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	client := cloudwatchlogs.New(cloudwatchlogs.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("id", "secret", ""),
		RetryMaxAttempts: 1,
		HTTPClient:       &http.Client{Timeout: 50 * time.Millisecond},
	})
	ctx := t.Context()
	_, err := client.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s")})
	if err == nil {
		t.Fatal("call to a hanging server succeeded")
	}
	if got := classifyCtx(ctx, err); got != classTransient {
		t.Fatalf("classify(%v) = %d, want transient", err, got)
	}
}

func TestRejected(t *testing.T) {
	tests := []struct {
		name string
		info *types.RejectedLogEventsInfo
		want map[string]int
	}{
		{name: "none"},
		{name: "too old", info: &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: aws.Int32(3)}, want: map[string]int{"too_old": 3}},
		{name: "too new", info: &types.RejectedLogEventsInfo{TooNewLogEventStartIndex: aws.Int32(8)}, want: map[string]int{"too_new": 2}},
		{name: "expired wider", info: &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: aws.Int32(2), ExpiredLogEventEndIndex: aws.Int32(4)}, want: map[string]int{"expired": 4}},
		{name: "out of range clamped", info: &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: aws.Int32(99), TooNewLogEventStartIndex: aws.Int32(-1)}, want: map[string]int{"too_old": 10}},
		{name: "overlapping ranges count once", info: &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: aws.Int32(6), TooNewLogEventStartIndex: aws.Int32(4)}, want: map[string]int{"too_old": 6, "too_new": 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rejected(tt.info, 10)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) && (len(got) != 0 || len(tt.want) != 0) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			total := 0
			for _, n := range got {
				total += n
			}
			if total > 10 {
				t.Fatalf("%d of 10 events rejected", total)
			}
		})
	}
}

type countingObserver struct{ throttles, serverErrors int }

func (o *countingObserver) Throttled(context.Context, string, error)   { o.throttles++ }
func (o *countingObserver) ServerError(context.Context, string, error) { o.serverErrors++ }
func (o *countingObserver) GroupCreated(context.Context)               {}
func (o *countingObserver) StreamCreated(context.Context)              {}
func (o *countingObserver) SettingsApplied(context.Context, bool)      {}
func (o *countingObserver) ClassMismatch(context.Context)              {}
func (o *countingObserver) GroupWaitCut(context.Context)               {}

func TestRetry(t *testing.T) {
	tests := []struct {
		name      string
		errs      []error
		elapsed   time.Duration
		wantErr   bool
		wantCalls int
		wantWaits []time.Duration // each wait before randomization (±50 %)
	}{
		{name: "success", errs: []error{nil}, wantCalls: 1},
		{name: "throttled then ok", errs: []error{apiErr("ThrottlingException"), httpErr(500), nil}, wantCalls: 3, wantWaits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{name: "permanent stops", errs: []error{apiErr("InvalidParameterException")}, wantErr: true, wantCalls: 1},
		{name: "budget runs out", errs: []error{apiErr("ThrottlingException"), apiErr("ThrottlingException"), apiErr("ThrottlingException"), apiErr("ThrottlingException"), apiErr("ThrottlingException")}, elapsed: 150 * time.Millisecond, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := &countingObserver{}
			s := New(nil, Config{Backoff: Backoff{Initial: 100 * time.Millisecond, Max: 300 * time.Millisecond, Multiplier: 2, Randomization: 0.5}}, obs, zap.NewNop())
			var waits []time.Duration
			var slept time.Duration
			s.sleep = func(_ context.Context, d time.Duration) error {
				waits = append(waits, d)
				slept += d
				return nil
			}
			calls := 0
			ctx := context.Background()
			if tt.elapsed > 0 {
				ctx = WithDeadline(ctx, time.Now().Add(tt.elapsed))
			}
			err := s.retry(ctx, "op", func() error {
				calls++
				if calls > len(tt.errs) {
					return apiErr("ThrottlingException")
				}
				return tt.errs[calls-1]
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if tt.wantCalls > 0 && calls != tt.wantCalls {
				t.Fatalf("calls = %d, want %d", calls, tt.wantCalls)
			}
			for i, w := range tt.wantWaits {
				if waits[i] > w*3/2 || waits[i] < w/2 {
					t.Fatalf("wait %d = %v, want in [%v, %v]", i, waits[i], w/2, w*3/2)
				}
			}
		})
	}
}

// TestBackoffJitter: each wait is spread over wait*(1±Randomization), and does spread; the
// multiplier grows the base up to Max.
func TestBackoffJitter(t *testing.T) {
	cfg := Backoff{Initial: time.Second, Max: 4 * time.Second, Multiplier: 1.5, Randomization: 0.5}
	lo, hi := time.Hour, time.Duration(0)
	for range 200 {
		var b backoffState
		d := b.next(cfg)
		lo, hi = min(lo, d), max(hi, d)
		if d < 500*time.Millisecond || d > 1500*time.Millisecond {
			t.Fatalf("first wait %v outside 1s±50%%", d)
		}
	}
	if hi-lo < 500*time.Millisecond {
		t.Fatalf("200 first waits within [%v, %v]: no jitter", lo, hi)
	}
	var b backoffState
	var bases []time.Duration
	for range 6 {
		b.next(cfg)
		bases = append(bases, b.wait)
	}
	want := []time.Duration{time.Second, 1500 * time.Millisecond, 2250 * time.Millisecond, 3375 * time.Millisecond, 4 * time.Second, 4 * time.Second}
	for i := range want {
		if bases[i] != want[i] {
			t.Fatalf("base waits %v, want %v", bases, want)
		}
	}
}

// TestRejectedNeverMoreThanSent: whatever ranges CloudWatch reports, the counts add up to at
// most the events of the batch.
func TestRejectedNeverMoreThanSent(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 14))
	idx := func(n int) *int32 {
		if rng.IntN(4) == 0 {
			return nil
		}
		return aws.Int32(int32(rng.IntN(n+11) - 5))
	}
	for range 10_000 {
		n := 1 + rng.IntN(20)
		info := &types.RejectedLogEventsInfo{TooOldLogEventEndIndex: idx(n), ExpiredLogEventEndIndex: idx(n), TooNewLogEventStartIndex: idx(n)}
		total := 0
		for _, c := range rejected(info, n) {
			total += c
		}
		if total > n {
			t.Fatalf("%d of %d events rejected for %+v", total, n, info)
		}
	}
}
