// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"errors"
	"fmt"
	"time"
)

// Config configures a Server. The zero value is a valid configuration: region
// us-east-1, account 123456789012, the wall clock, AWS's default request-rate quotas, new
// groups and streams usable at once, and no faults.
type Config struct {
	// Region and AccountID appear in the ARNs the server returns.
	Region    string
	AccountID string

	// Now is the clock used for the PutLogEvents time window, ingestion times and
	// creation times. Rate quotas always use the monotonic wall clock. Default time.Now.
	Now func() time.Time

	// Seed makes fault injection deterministic: the same seed and the same request
	// sequence give the same faults.
	Seed uint64

	// Faults are the faults injected from the start; change them with SetFaults.
	Faults Faults

	// Quotas are the request-rate quotas answered with ThrottlingException. The zero value
	// means AWS's defaults (AWSQuotas); a test that needs none says so with Unlimited.
	Quotas Quotas

	// CreationDelay models CloudWatch's eventual consistency: for this long after a group or
	// stream is created, every operation but its own Create answers ResourceNotFoundException
	// for it and DescribeLogGroups / DescribeLogStreams do not list it. Zero: usable at once.
	CreationDelay time.Duration

	// Limits are the account and PutLogEvents limits. The zero value means the
	// documented CloudWatch Logs limits (DefaultLimits).
	Limits Limits

	// AllowUnsigned accepts requests without a SigV4 Authorization header. By default
	// such requests are answered with MissingAuthenticationTokenException, as AWS does.
	AllowUnsigned bool

	// Credentials maps access key IDs to secret access keys. When set, every signed request's
	// SigV4 signature is verified (internal/awsauth/sigv4check: service "logs", Region, body hash, a
	// 5-minute skew against the wall clock) and a wrong one is answered as AWS does
	// (UnrecognizedClientException, InvalidSignatureException, ...). Without it only the
	// header's shape is checked. The map must not change after New.
	Credentials map[string]string

	// DiscardMessages keeps stream metadata and counters but does not store event
	// messages (Events then returns nothing). For long benchmarks.
	DiscardMessages bool
}

// Limits are the account and PutLogEvents limits the server enforces.
type Limits struct {
	// MaxLogGroups is the most log groups the account may have; CreateLogGroup beyond it
	// is answered LimitExceededException. AWS: 1,000,000 per Region.
	MaxLogGroups int
	// MaxBatchBytes is the largest batch: the UTF-8 bytes of all messages plus
	// EventOverheadBytes per event. AWS: 1,048,576.
	MaxBatchBytes int
	// MaxBatchEvents is the largest number of events in one batch. AWS: 10,000.
	MaxBatchEvents int
	// MaxEventBytes is the largest single event, message bytes plus
	// EventOverheadBytes. AWS: 1 MB (1,048,576).
	MaxEventBytes int
	// MaxAge rejects (tooOldLogEventEndIndex) events older than now-MaxAge. AWS: 14 days.
	MaxAge time.Duration
	// MaxFuture rejects (tooNewLogEventStartIndex) events newer than now+MaxFuture. AWS: 2 hours.
	MaxFuture time.Duration
	// MaxSpan is the largest time span of the accepted events of one batch. AWS: 24 hours.
	MaxSpan time.Duration
}

// EventOverheadBytes is the size CloudWatch Logs adds to every event's message when it
// computes batch sizes.
const EventOverheadBytes = 26

// DefaultLimits returns the documented CloudWatch Logs PutLogEvents limits.
func DefaultLimits() Limits {
	return Limits{
		MaxLogGroups:   1_000_000,
		MaxBatchBytes:  1_048_576,
		MaxBatchEvents: 10_000,
		MaxEventBytes:  1_048_576,
		MaxAge:         14 * 24 * time.Hour,
		MaxFuture:      2 * time.Hour,
		MaxSpan:        24 * time.Hour,
	}
}

// withDefaults fills every zero field from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxLogGroups <= 0 {
		l.MaxLogGroups = d.MaxLogGroups
	}
	if l.MaxBatchBytes <= 0 {
		l.MaxBatchBytes = d.MaxBatchBytes
	}
	if l.MaxBatchEvents <= 0 {
		l.MaxBatchEvents = d.MaxBatchEvents
	}
	if l.MaxEventBytes <= 0 {
		l.MaxEventBytes = d.MaxEventBytes
	}
	if l.MaxAge <= 0 {
		l.MaxAge = d.MaxAge
	}
	if l.MaxFuture <= 0 {
		l.MaxFuture = d.MaxFuture
	}
	if l.MaxSpan <= 0 {
		l.MaxSpan = d.MaxSpan
	}
	return l
}

// Quotas are request-rate quotas. A rate of 0 means unlimited. Each quota is a token
// bucket that holds one second of requests (at least one). The zero value means AWSQuotas.
type Quotas struct {
	// Unlimited turns every quota off (benchmarks, and tests that count on no throttling).
	Unlimited bool
	// PerAccount maps an operation name (for example "PutLogEvents") to the requests
	// per second the whole account may make.
	PerAccount map[string]float64
	// PutLogEventsPerStream is the PutLogEvents requests per second per log stream.
	// AWS removed this quota (it was 5) in 2023; it is kept for old-behavior tests.
	PutLogEventsPerStream float64
}

// Unlimited returns quotas that never throttle.
func Unlimited() Quotas { return Quotas{Unlimited: true} }

// withDefaults returns AWSQuotas for the zero value, nothing when Unlimited, else q.
func (q Quotas) withDefaults() Quotas {
	switch {
	case q.Unlimited:
		return Quotas{Unlimited: true}
	case q.PerAccount == nil && q.PutLogEventsPerStream == 0:
		return AWSQuotas()
	}
	return q
}

// AWSQuotas returns the default CloudWatch Logs per-account, per-Region quotas of the
// largest Regions (us-east-1, us-west-2, eu-west-1).
func AWSQuotas() Quotas {
	return Quotas{PerAccount: map[string]float64{
		"PutLogEvents":          5000,
		"CreateLogGroup":        5,
		"CreateLogStream":       50,
		"DeleteLogGroup":        5,
		"DeleteLogStream":       15,
		"DescribeLogGroups":     10,
		"DescribeLogStreams":    25,
		"GetLogEvents":          25,
		"FilterLogEvents":       5,
		"PutRetentionPolicy":    5,
		"DeleteRetentionPolicy": 5,
		"TagLogGroup":           5,
		"UntagLogGroup":         5,
		"ListTagsLogGroup":      10,
		"TagResource":           5,
		"UntagResource":         5,
		"ListTagsForResource":   10,
		"AssociateKmsKey":       5,
		"DisassociateKmsKey":    5,
	}}
}

// Faults are injected into API requests (never into the /local/ endpoints).
// Rates are probabilities between 0 and 1, drawn from the server's seeded generator.
type Faults struct {
	// ThrottleRate answers this fraction of requests with ThrottlingException (400).
	ThrottleRate float64 `json:"throttleRate,omitempty"`
	// ServerErrorRate answers this fraction with ServiceUnavailableException (503).
	ServerErrorRate float64 `json:"serverErrorRate,omitempty"`
	// DropRate closes the connection of this fraction without processing the request.
	DropRate float64 `json:"dropRate,omitempty"`
	// DropAfterRate processes this fraction and then closes the connection without a
	// response: the client cannot tell that the request succeeded.
	DropAfterRate float64 `json:"dropAfterRate,omitempty"`
	// ServerErrorAfterRate processes and stores this fraction, then answers
	// ServiceUnavailableException (503): the client retries a call that succeeded.
	ServerErrorAfterRate float64 `json:"serverErrorAfterRate,omitempty"`
	// ErrorRate answers this fraction with ErrorCode (one of the InjectableCodes) before
	// processing, with the HTTP status CloudWatch Logs uses for it.
	ErrorRate float64 `json:"errorRate,omitempty"`
	ErrorCode string  `json:"errorCode,omitempty"`
	// Latency is added before every request is processed, plus a uniformly drawn
	// extra of up to LatencyJitter.
	Latency       Duration `json:"latency,omitempty"`
	LatencyJitter Duration `json:"latencyJitter,omitempty"`
	// Down closes the listener and every open connection: new connections are
	// refused until Down is cleared, when the server listens again on the same address.
	Down bool `json:"down,omitempty"`
	// Operations limits the faults above (except Down) to these operations; empty
	// means every operation.
	Operations []string `json:"operations,omitempty"`
}

// Validate reports a rate outside [0, 1] or a negative duration.
func (f Faults) Validate() error {
	rates := []struct {
		name string
		v    float64
	}{
		{"throttleRate", f.ThrottleRate},
		{"serverErrorRate", f.ServerErrorRate},
		{"dropRate", f.DropRate},
		{"dropAfterRate", f.DropAfterRate},
		{"serverErrorAfterRate", f.ServerErrorAfterRate},
		{"errorRate", f.ErrorRate},
	}
	sum := 0.0
	for _, r := range rates {
		if r.v < 0 || r.v > 1 {
			return fmt.Errorf("%s %v is outside [0, 1]", r.name, r.v)
		}
		if r.name != "dropAfterRate" && r.name != "serverErrorAfterRate" {
			sum += r.v
		}
	}
	if sum > 1 {
		return fmt.Errorf("throttleRate + serverErrorRate + dropRate = %v exceeds 1", sum)
	}
	if f.ErrorRate > 0 {
		if _, ok := InjectableCodes[f.ErrorCode]; !ok {
			return fmt.Errorf("errorCode %q: not one of the injectable codes", f.ErrorCode)
		}
	}
	if f.Latency < 0 || f.LatencyJitter < 0 {
		return errors.New("latency and latencyJitter must not be negative")
	}
	for _, op := range f.Operations {
		if !isOperation(op) {
			return fmt.Errorf("unknown operation %q", op)
		}
	}
	return nil
}

func (f Faults) appliesTo(op string) bool {
	if len(f.Operations) == 0 {
		return true
	}
	for _, o := range f.Operations {
		if o == op {
			return true
		}
	}
	return false
}

// Duration is a time.Duration that reads and writes JSON as a Go duration string
// ("250ms") and also reads a number of nanoseconds.
type Duration time.Duration

// MarshalJSON writes the duration as a string such as "1.5s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Duration(d).String() + `"`), nil
}

// UnmarshalJSON reads a duration string or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		v, err := time.ParseDuration(s[1 : len(s)-1])
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		return fmt.Errorf("duration %s: want a string like \"250ms\" or nanoseconds", s)
	}
	*d = Duration(n)
	return nil
}

// InjectableCodes are the errors ErrorRate can answer, with the HTTP status CloudWatch Logs
// answers them with (the API reference's common errors and the operations' errors): access and
// credential problems, and the concurrent-modification answer a DaemonSet rollout provokes.
var InjectableCodes = map[string]int{
	"AccessDeniedException":       400,
	"UnrecognizedClientException": 400,
	"ExpiredTokenException":       400,
	"InvalidSignatureException":   400,
	"OperationAbortedException":   400,
	"ServiceUnavailableException": 503,
}
