// SPDX-License-Identifier: Apache-2.0

package localxray

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-k8s/otelcol-k8s/internal/awsauth/sigv4check"
)

// TracesPath is the endpoint's path.
const TracesPath = "/v1/traces"

// Limits are the X-Ray OTLP endpoint's limits ("OTLP Endpoints", Amazon CloudWatch User Guide:
// endpoint limits and restrictions).
type Limits struct {
	// MaxSpans per request: 10,000.
	MaxSpans int
	// MaxBytes of the uncompressed request: 5 MB.
	MaxBytes int
	// MaxSpanBytes is the largest single span (its protobuf encoding): 200 KB.
	MaxSpanBytes int
	// MaxAge and MaxFuture bound every span's start time: 14 days in the past, 2 hours in the
	// future.
	MaxAge, MaxFuture time.Duration
	// MaxSpread is the largest time between the earliest and the latest span start of one
	// request: 24 hours.
	MaxSpread time.Duration
}

// DefaultLimits returns the documented limits.
func DefaultLimits() Limits {
	return Limits{
		MaxSpans: 10_000, MaxBytes: 5 << 20, MaxSpanBytes: 200 << 10,
		MaxAge: 14 * 24 * time.Hour, MaxFuture: 2 * time.Hour, MaxSpread: 24 * time.Hour,
	}
}

// Config configures a Server.
type Config struct {
	// Region is the Region signatures must be scoped to; default us-east-1.
	Region string
	// Credentials maps access key IDs to secrets; signatures are verified against them. Empty
	// refuses every request as an unknown key (X-Ray has no anonymous access).
	Credentials map[string]string
	// Tokens maps access keys of temporary credentials to their session token.
	Tokens map[string]string
	// Limits; the zero value means DefaultLimits.
	Limits Limits
	// Now is the clock for signature skew and span times; default time.Now.
	Now func() time.Time
}

// Stats counts what the server answered.
type Stats struct {
	// Requests is every request to TracesPath; Accepted the ones answered 200.
	Requests, Accepted int64
	// SpansStored counts the spans kept; SpansRejected the ones refused in a partial success.
	SpansStored, SpansRejected int64
	// Errors counts error answers by code (x-amzn-ErrorType).
	Errors map[string]int64
}

// Batch is one accepted request: its spans and the access key that signed it.
type Batch struct {
	AccessKey string
	Traces    ptrace.Traces
}

// Server is a local X-Ray OTLP endpoint. Safe for concurrent use.
type Server struct {
	cfg    Config
	limits Limits
	v      sigv4check.Verifier

	mu      sync.Mutex
	batches []Batch
	stats   Stats
	faults  []int // statuses answered to the next requests, before verification

	srv *http.Server
	ln  net.Listener
	wg  sync.WaitGroup
}

// New returns a server; it serves nothing until Start.
func New(cfg Config) *Server {
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	l := cfg.Limits
	d := DefaultLimits()
	if l.MaxSpans <= 0 {
		l.MaxSpans = d.MaxSpans
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxSpanBytes <= 0 {
		l.MaxSpanBytes = d.MaxSpanBytes
	}
	if l.MaxAge <= 0 {
		l.MaxAge = d.MaxAge
	}
	if l.MaxSpread <= 0 {
		l.MaxSpread = d.MaxSpread
	}
	if l.MaxFuture <= 0 {
		l.MaxFuture = d.MaxFuture
	}
	return &Server{
		cfg:    cfg,
		limits: l,
		v: sigv4check.Verifier{
			Secrets: cfg.Credentials, Tokens: cfg.Tokens,
			Service: "xray", Region: cfg.Region, Now: cfg.Now,
		},
		stats: Stats{Errors: map[string]int64{}},
	}
}

// Start listens on addr ("127.0.0.1:0" for a free port) and returns the base URL; the traces
// endpoint is that URL + TracesPath.
func (s *Server) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("localxray: listen: %w", err)
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), nil
}

// Close stops serving; what was stored stays readable.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	s.wg.Wait()
	return err
}

// FailNext answers the next len(statuses) requests with these statuses (429 or 5xx) before
// anything else is checked, as a throttled or unavailable endpoint does.
func (s *Server) FailNext(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, statuses...)
}

// Batches returns the accepted requests, in order.
func (s *Server) Batches() []Batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Batch(nil), s.batches...)
}

// SpanCount is the number of spans stored.
func (s *Server) SpanCount() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.SpansStored
}

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Errors = make(map[string]int64, len(s.stats.Errors))
	for k, v := range s.stats.Errors {
		st.Errors[k] = v
	}
	return st
}

// apiError is an answer in X-Ray's restJson error shape.
type apiError struct {
	status int
	code   string
	msg    string
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != TracesPath {
		s.fail(w, &apiError{http.StatusNotFound, "UnknownOperationException", "no such path: " + r.URL.Path})
		return
	}
	s.mu.Lock()
	s.stats.Requests++
	var fault int
	if len(s.faults) > 0 {
		fault, s.faults = s.faults[0], s.faults[1:]
	}
	s.mu.Unlock()
	switch {
	case fault == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		s.fail(w, &apiError{fault, "ThrottledException", "Rate exceeded"})
		return
	case fault != 0:
		s.fail(w, &apiError{fault, "ServiceUnavailableException", "injected"})
		return
	}
	if r.Method != http.MethodPost {
		s.fail(w, &apiError{http.StatusMethodNotAllowed, "InvalidRequestException", "only POST"})
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(s.limits.MaxBytes)+1))
	if err != nil {
		s.fail(w, tooLarge(s.limits.MaxBytes))
		return
	}
	key, err := s.v.Verify(r, raw)
	if err != nil {
		var e *sigv4check.Error
		if !errors.As(err, &e) {
			e = &sigv4check.Error{Kind: sigv4check.IncompleteSignature, Message: err.Error()}
		}
		s.fail(w, &apiError{e.Status(sigv4check.RESTJSON), e.Code(sigv4check.RESTJSON), e.Message})
		return
	}
	body, aerr := s.decompress(r, raw)
	if aerr != nil {
		s.fail(w, aerr)
		return
	}
	req := ptraceotlp.NewExportRequest()
	jsonBody := false
	switch ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(ct) {
	case "application/x-protobuf":
		err = req.UnmarshalProto(body)
	case "application/json":
		jsonBody = true
		err = req.UnmarshalJSON(body)
	default:
		s.fail(w, &apiError{http.StatusUnsupportedMediaType, "InvalidRequestException", "Content-Type must be application/x-protobuf or application/json"})
		return
	}
	if err != nil {
		s.fail(w, &apiError{http.StatusBadRequest, "InvalidRequestException", "the body is not an OTLP ExportTraceServiceRequest: " + err.Error()})
		return
	}
	kept, rejected, aerr := s.check(req.Traces())
	if aerr != nil {
		s.fail(w, aerr)
		return
	}
	resp := ptraceotlp.NewExportResponse()
	if rejected > 0 {
		resp.PartialSuccess().SetRejectedSpans(int64(rejected))
		resp.PartialSuccess().SetErrorMessage(fmt.Sprintf("%d spans have an all-zero trace or span ID", rejected))
	}
	s.mu.Lock()
	s.stats.Accepted++
	s.stats.SpansStored += int64(kept.SpanCount())
	s.stats.SpansRejected += int64(rejected)
	if kept.SpanCount() > 0 {
		s.batches = append(s.batches, Batch{AccessKey: key, Traces: kept})
	}
	s.mu.Unlock()
	var out []byte
	if jsonBody {
		out, err = resp.MarshalJSON()
		w.Header().Set("Content-Type", "application/json")
	} else {
		out, err = resp.MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}
	if err != nil {
		s.fail(w, &apiError{http.StatusInternalServerError, "InternalFailure", err.Error()})
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

func tooLarge(limit int) *apiError {
	return &apiError{http.StatusBadRequest, "InvalidRequestException", fmt.Sprintf("the uncompressed request exceeds %d bytes", limit)}
}

// decompress undoes gzip (the only compression the endpoint takes), within MaxBytes.
func (s *Server) decompress(r *http.Request, raw []byte) ([]byte, *apiError) {
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return raw, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, &apiError{http.StatusBadRequest, "InvalidRequestException", "gzip body: " + err.Error()}
		}
		body, err := io.ReadAll(io.LimitReader(zr, int64(s.limits.MaxBytes)+1))
		if err != nil {
			return nil, &apiError{http.StatusBadRequest, "InvalidRequestException", "gzip body: " + err.Error()}
		}
		if len(body) > s.limits.MaxBytes {
			return nil, tooLarge(s.limits.MaxBytes)
		}
		return body, nil
	default:
		return nil, &apiError{http.StatusUnsupportedMediaType, "InvalidRequestException", "Content-Encoding " + enc + " is not supported (gzip or none)"}
	}
}

// check applies the request-level limits (a violation refuses the whole request) and drops
// spans with an all-zero trace or span ID (a partial success).
func (s *Server) check(td ptrace.Traces) (ptrace.Traces, int, *apiError) {
	if n := td.SpanCount(); n > s.limits.MaxSpans {
		return td, 0, &apiError{http.StatusBadRequest, "InvalidRequestException", fmt.Sprintf("%d spans in one request; at most %d", n, s.limits.MaxSpans)}
	}
	now := s.cfg.Now()
	oldest, newest := now.Add(-s.limits.MaxAge), now.Add(s.limits.MaxFuture)
	var first, last time.Time
	var sizer ptrace.ProtoMarshaler
	one := ptrace.NewTraces()
	oneSpan := one.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	rejected := 0
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				st := sp.StartTimestamp().AsTime()
				if st.Before(oldest) || st.After(newest) {
					return td, 0, &apiError{
						http.StatusBadRequest, "InvalidRequestException",
						fmt.Sprintf("span %s starts at %s, outside [now-%s, now+%s]", sp.SpanID(), st.Format(time.RFC3339), s.limits.MaxAge, s.limits.MaxFuture),
					}
				}
				if first.IsZero() || st.Before(first) {
					first = st
				}
				if st.After(last) {
					last = st
				}
				sp.CopyTo(oneSpan)
				if n := sizer.TracesSize(one); n > s.limits.MaxSpanBytes {
					return td, 0, &apiError{
						http.StatusBadRequest, "InvalidRequestException",
						fmt.Sprintf("span %s is %d bytes; at most %d", sp.SpanID(), n, s.limits.MaxSpanBytes),
					}
				}
			}
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				bad := sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty()
				if bad {
					rejected++
				}
				return bad
			})
		}
	}
	if last.Sub(first) > s.limits.MaxSpread {
		return td, 0, &apiError{
			http.StatusBadRequest, "InvalidRequestException",
			fmt.Sprintf("the spans' start times span %s; at most %s in one request", last.Sub(first), s.limits.MaxSpread),
		}
	}
	return td, rejected, nil
}

// fail answers in X-Ray's restJson error shape: the code in x-amzn-ErrorType, a JSON body
// with the message.
func (s *Server) fail(w http.ResponseWriter, e *apiError) {
	s.mu.Lock()
	s.stats.Errors[e.code]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-ErrorType", e.code)
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": e.msg})
}
