// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

func retryingClient(endpoint string) *cloudwatchlogs.Client {
	return newClient(endpoint, retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = 20
		o.MaxBackoff = 5 * time.Millisecond
		o.RateLimiter = ratelimit.None
	}))
}

func TestAccountQuota(t *testing.T) {
	srv, c := start(t, localcloudwatch.Config{Quotas: localcloudwatch.Quotas{PerAccount: map[string]float64{"CreateLogStream": 2}}})
	mustCreate(t, c, "q")
	began := time.Now()
	ok, throttled := 0, 0
	for i := range 6 {
		_, err := c.CreateLogStream(ctx(t), &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String("q"), LogStreamName: aws.String(strconv.Itoa(i))})
		switch errCode(t, err) {
		case "":
			ok++
		case "ThrottlingException":
			throttled++
		default:
			t.Fatal(err)
		}
	}
	// A bucket of 2 tokens refilled at 2/s.
	if allowed := 2 + int(time.Since(began).Seconds()*2); ok > allowed || throttled == 0 {
		t.Fatalf("ok %d throttled %d (allowed %d)", ok, throttled, allowed)
	}
	st := srv.Stats()
	if st.QuotaThrottles != int64(throttled) || st.Throttles != int64(throttled) || st.Errors["ThrottlingException"] != int64(throttled) {
		t.Fatalf("stats %+v", st)
	}
}

func TestPerStreamQuota(t *testing.T) {
	_, c := start(t, localcloudwatch.Config{Quotas: localcloudwatch.Quotas{PutLogEventsPerStream: 1}})
	mustCreate(t, c, "g", "a", "b")
	now := time.Now().UnixMilli()
	putTo := func(stream string) string {
		_, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String(stream), LogEvents: events([]int64{now})})
		return errCode(t, err)
	}
	if got := putTo("a"); got != "" {
		t.Fatal(got)
	}
	if got := putTo("a"); got != "ThrottlingException" {
		t.Fatalf("second put to a: %q", got)
	}
	if got := putTo("b"); got != "" {
		t.Fatalf("put to b: %q", got)
	}
}

// outcomes runs n PutLogEvents without retries and returns the error code of each.
func outcomes(t *testing.T, f localcloudwatch.Faults, seed uint64, n int) []string {
	srv, c := start(t, localcloudwatch.Config{Seed: seed})
	mustCreate(t, c, "g", "s")
	if err := srv.SetFaults(f); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	out := make([]string, n)
	for i := range out {
		_, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), LogEvents: events([]int64{now})})
		var ae interface{ ErrorCode() string }
		switch {
		case err == nil:
		case errors.As(err, &ae):
			out[i] = ae.ErrorCode()
		default:
			out[i] = "dropped"
		}
	}
	return out
}

func TestInjectedFaultsAreSeededAndProportional(t *testing.T) {
	f := localcloudwatch.Faults{ThrottleRate: 0.3, ServerErrorRate: 0.1, DropRate: 0.1}
	a := outcomes(t, f, 42, 300)
	b := outcomes(t, f, 42, 300)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("same seed gave different fault sequences")
	}
	if c := outcomes(t, f, 43, 300); fmt.Sprint(a) == fmt.Sprint(c) {
		t.Fatal("different seeds gave the same fault sequence")
	}
	count := map[string]int{}
	for _, o := range a {
		count[o]++
	}
	within := func(got int, rate float64) bool { return float64(got) > rate*300*0.5 && float64(got) < rate*300*1.5 }
	if !within(count["ThrottlingException"], 0.3) || !within(count["ServiceUnavailableException"], 0.1) || !within(count["dropped"], 0.1) {
		t.Fatalf("outcome counts %v", count)
	}
}

func TestRetriesThroughFaultsStoreEveryEventOnce(t *testing.T) {
	srv, _ := start(t, localcloudwatch.Config{Seed: 7, Faults: localcloudwatch.Faults{ThrottleRate: 0.3, ServerErrorRate: 0.05, DropRate: 0.05}})
	c := retryingClient("http://" + srv.Addr())
	mustCreate(t, c, "g", "s")
	now := time.Now().UnixMilli()
	for i := range 100 {
		if _, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{
			LogGroupName: aws.String("g"), LogStreamName: aws.String("s"),
			LogEvents: events([]int64{now}, fmt.Sprintf("e%03d", i)),
		}); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	stored, _ := srv.Events("g", "s")
	if len(stored) != 100 {
		t.Fatalf("stored %d", len(stored))
	}
	for i, e := range stored {
		if e.Message != fmt.Sprintf("e%03d", i) {
			t.Fatalf("event %d is %q", i, e.Message)
		}
	}
	st := srv.Stats()
	if st.InjectedThrottles == 0 || st.InjectedServerErrors == 0 || st.DroppedConnections == 0 {
		t.Fatalf("faults not injected: %+v", st)
	}
}

func TestDropAfterProcessingDuplicatesOnRetry(t *testing.T) {
	srv, _ := start(t, localcloudwatch.Config{Faults: localcloudwatch.Faults{DropAfterRate: 1, Operations: []string{"PutLogEvents"}}})
	c := retryingClient("http://" + srv.Addr())
	mustCreate(t, c, "g", "s") // not affected: faults limited to PutLogEvents
	now := time.Now().UnixMilli()
	_, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), LogEvents: events([]int64{now})},
		func(o *cloudwatchlogs.Options) { o.Retryer = retry.AddWithMaxAttempts(o.Retryer, 3) })
	if err == nil {
		t.Fatal("want an error: every response is dropped")
	}
	stored, _ := srv.Events("g", "s")
	if len(stored) != 3 || srv.Stats().DroppedResponses != 3 {
		t.Fatalf("stored %d, stats %+v", len(stored), srv.Stats())
	}
}

func TestLatency(t *testing.T) {
	_, c := start(t, localcloudwatch.Config{Faults: localcloudwatch.Faults{Latency: localcloudwatch.Duration(80 * time.Millisecond)}})
	began := time.Now()
	mustCreate(t, c, "slow")
	if d := time.Since(began); d < 80*time.Millisecond {
		t.Fatalf("request took %v", d)
	}
}

func TestDownAndBackUp(t *testing.T) {
	srv, c := start(t, localcloudwatch.Config{})
	mustCreate(t, c, "before")
	if err := srv.SetFaults(localcloudwatch.Faults{Down: true}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("during")})
	if err == nil || errCodeOrEmpty(err) != "" {
		t.Fatalf("want a connection error while down, got %v", err)
	}
	if err := srv.SetFaults(localcloudwatch.Faults{}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "after")
	if g := srv.Groups(); len(g) != 2 {
		t.Fatalf("groups %+v", g)
	}
}

func errCodeOrEmpty(err error) string {
	var ae interface{ ErrorCode() string }
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func TestFaultsValidate(t *testing.T) {
	srv := localcloudwatch.New(localcloudwatch.Config{})
	for _, f := range []localcloudwatch.Faults{
		{ThrottleRate: -0.1},
		{ServerErrorRate: 1.5},
		{ThrottleRate: 0.6, DropRate: 0.6},
		{Latency: -1},
		{Operations: []string{"NoSuchOperation"}},
	} {
		if err := srv.SetFaults(f); err == nil {
			t.Errorf("%+v accepted", f)
		}
	}
}

func TestStartDownAndConcurrentToggles(t *testing.T) {
	srv, c := start(t, localcloudwatch.Config{Faults: localcloudwatch.Faults{Down: true}})
	if _, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("g")}); err == nil {
		t.Fatal("server started down answered")
	}
	done := make(chan struct{})
	for i := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := range 20 {
				_ = srv.SetFaults(localcloudwatch.Faults{Down: (i+j)%2 == 0})
			}
		}()
	}
	for range 8 {
		<-done
	}
	if err := srv.SetFaults(localcloudwatch.Faults{}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "g")
}

func TestConcurrentWritersAndReaders(t *testing.T) {
	srv, _ := start(t, localcloudwatch.Config{Seed: 3, Faults: localcloudwatch.Faults{ThrottleRate: 0.2, ServerErrorRate: 0.05}})
	c := retryingClient("http://" + srv.Addr())
	mustCreate(t, c, "g")
	const writers, batches = 6, 15
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			stream := fmt.Sprintf("s%d", w)
			if _, err := c.CreateLogStream(ctx(t), &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String("g"), LogStreamName: aws.String(stream)}); err != nil {
				errs <- err
				return
			}
			for b := range batches {
				now := time.Now().UnixMilli()
				if _, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{
					LogGroupName: aws.String("g"), LogStreamName: aws.String(stream),
					LogEvents: events([]int64{now, now}, fmt.Sprintf("%d-a", b), fmt.Sprintf("%d-b", b)),
				}); err != nil {
					errs <- err
					return
				}
				_ = srv.Summary()
				_, _ = c.GetLogEvents(ctx(t), &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String(stream)})
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.Stats().EventsAccepted; got != writers*batches*2 {
		t.Fatalf("accepted %d events", got)
	}
}

// A 503 after the events were stored: the client retries a call that succeeded, and the
// events are stored twice, the duplicate an exporter's "at least once" must allow for.
func TestServerErrorAfterStoring(t *testing.T) {
	srv, _ := start(t, localcloudwatch.Config{Faults: localcloudwatch.Faults{ServerErrorAfterRate: 1, Operations: []string{"PutLogEvents"}}})
	c := retryingClient("http://" + srv.Addr())
	mustCreate(t, c, "g", "s")
	_, err := c.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("g"), LogStreamName: aws.String("s"), LogEvents: events([]int64{time.Now().UnixMilli()})},
		func(o *cloudwatchlogs.Options) { o.Retryer = retry.AddWithMaxAttempts(o.Retryer, 2) })
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "ServiceUnavailableException" {
		t.Fatalf("err = %v, want ServiceUnavailableException", err)
	}
	stored, _ := srv.Events("g", "s")
	if len(stored) != 2 {
		t.Fatalf("stored %d events, want 2 (stored before each 503)", len(stored))
	}
}

// Injected error codes arrive with CloudWatch Logs' status and code, as the SDK parses them.
func TestInjectedErrorCodes(t *testing.T) {
	for code, status := range localcloudwatch.InjectableCodes {
		t.Run(code, func(t *testing.T) {
			srv, _ := start(t, localcloudwatch.Config{Faults: localcloudwatch.Faults{ErrorRate: 1, ErrorCode: code}})
			c := retryingClient("http://" + srv.Addr())
			_, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("g")},
				func(o *cloudwatchlogs.Options) { o.Retryer = aws.NopRetryer{} })
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != code {
				t.Fatalf("err = %v, want %s", err, code)
			}
			var respErr *smithyhttp.ResponseError
			if !errors.As(err, &respErr) || respErr.HTTPStatusCode() != status {
				t.Fatalf("status of %v, want %d", err, status)
			}
		})
	}
	if err := (localcloudwatch.Faults{ErrorRate: 1, ErrorCode: "Bogus"}).Validate(); err == nil {
		t.Fatal("an unknown code validated")
	}
}
