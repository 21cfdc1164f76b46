// SPDX-License-Identifier: Apache-2.0

package localxray

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	key    = "AKIDXRAY"
	secret = "xray/secret"
)

// makeTraces returns n spans started at start; zeroIDs of them have an all-zero trace ID.
func makeTraces(n, zeroIDs int, start time.Time) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i := range n {
		sp := ss.Spans().AppendEmpty()
		sp.SetName("op")
		if i >= zeroIDs {
			sp.SetTraceID(pcommon.TraceID{1, byte(i), byte(i >> 8)})
		}
		sp.SetSpanID(pcommon.SpanID{2, byte(i), byte(i >> 8)})
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
	}
	return td
}

// bigSpan is one span with a name of n bytes.
func bigSpan(n int, start time.Time) ptrace.Traces {
	td := makeTraces(1, 0, start)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SetName(strings.Repeat("n", n))
	return td
}

// spread is two requests' worth of spans in one: two started now, two started d earlier.
func spread(now time.Time, d time.Duration) ptrace.Traces {
	td := makeTraces(2, 0, now)
	makeTraces(2, 0, now.Add(-d)).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	return td
}

type call struct {
	body        []byte
	contentType string
	encoding    string
	key, secret string
	region      string
	unsigned    bool
}

func protoBody(t *testing.T, td ptrace.Traces) []byte {
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// do sends c, signed by the SDK's signer unless unsigned, and returns the status, the
// x-amzn-ErrorType and the body.
func do(t *testing.T, base string, c call) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, base+TracesPath, bytes.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.contentType == "" {
		c.contentType = "application/x-protobuf"
	}
	req.Header.Set("Content-Type", c.contentType)
	if c.encoding != "" {
		req.Header.Set("Content-Encoding", c.encoding)
	}
	if !c.unsigned {
		if c.key == "" {
			c.key, c.secret = key, secret
		}
		if c.region == "" {
			c.region = "us-east-1"
		}
		sum := sha256.Sum256(c.body)
		if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: c.key, SecretAccessKey: c.secret},
			req, hex.EncodeToString(sum[:]), "xray", c.region, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("x-amzn-ErrorType"), out
}

func start(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	if cfg.Credentials == nil {
		cfg.Credentials = map[string]string{key: secret}
	}
	s := New(cfg)
	base, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		http.DefaultClient.CloseIdleConnections()
	})
	return s, base
}

func TestAnswers(t *testing.T) {
	now := time.Now()
	ok := protoBody(t, makeTraces(3, 0, now))
	tests := []struct {
		name       string
		c          call
		wantStatus int
		wantCode   string
		wantStored int64
	}{
		{"protobuf gzip", call{body: gz(ok), encoding: "gzip"}, 200, "", 3},
		{"protobuf plain", call{body: ok}, 200, "", 3},
		{"unsigned", call{body: ok, unsigned: true}, 403, "MissingAuthenticationTokenException", 0},
		{"wrong secret", call{body: ok, key: key, secret: "wrong"}, 403, "InvalidSignatureException", 0},
		{"unknown key", call{body: ok, key: "AKIDOTHER", secret: secret}, 403, "UnrecognizedClientException", 0},
		{"other region", call{body: ok, region: "eu-west-1"}, 403, "InvalidSignatureException", 0},
		{"deflate", call{body: ok, encoding: "deflate"}, 415, "InvalidRequestException", 0},
		{"text", call{body: ok, contentType: "text/plain"}, 415, "InvalidRequestException", 0},
		{"not otlp", call{body: []byte{0xff, 0xff, 0xff}}, 400, "InvalidRequestException", 0},
		{"10,001 spans", call{body: gz(protoBody(t, makeTraces(10_001, 0, now))), encoding: "gzip"}, 400, "InvalidRequestException", 0},
		{"10,000 spans", call{body: gz(protoBody(t, makeTraces(10_000, 0, now))), encoding: "gzip"}, 200, "", 10_000},
		{"15 days old", call{body: protoBody(t, makeTraces(1, 0, now.Add(-15*24*time.Hour)))}, 400, "InvalidRequestException", 0},
		{"3 hours ahead", call{body: protoBody(t, makeTraces(1, 0, now.Add(3*time.Hour)))}, 400, "InvalidRequestException", 0},
		{"a 250 KB span", call{body: gz(protoBody(t, bigSpan(250<<10, now))), encoding: "gzip"}, 400, "InvalidRequestException", 0},
		{"a 190 KB span", call{body: gz(protoBody(t, bigSpan(190<<10, now))), encoding: "gzip"}, 200, "", 1},
		{"starts 25 hours apart", call{body: protoBody(t, spread(now, 25*time.Hour))}, 400, "InvalidRequestException", 0},
		{"starts 23 hours apart", call{body: protoBody(t, spread(now, 23*time.Hour))}, 200, "", 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, base := start(t, Config{})
			status, code, body := do(t, base, tc.c)
			if status != tc.wantStatus || code != tc.wantCode {
				t.Fatalf("%d %q (%s), want %d %q", status, code, body, tc.wantStatus, tc.wantCode)
			}
			if code != "" {
				var e struct{ Message string }
				if err := json.Unmarshal(body, &e); err != nil || e.Message == "" {
					t.Fatalf("error body %q is not {\"message\": ...}", body)
				}
			}
			if got := s.SpanCount(); got != tc.wantStored {
				t.Fatalf("stored %d, want %d", got, tc.wantStored)
			}
		})
	}
}

// TestSizeLimit: 5 MB uncompressed is the most; the limit applies after gunzip.
func TestSizeLimit(t *testing.T) {
	s, base := start(t, Config{Limits: Limits{MaxBytes: 1000}})
	td := makeTraces(1, 0, time.Now())
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SetName(strings.Repeat("n", 2000))
	big := protoBody(t, td)
	status, code, _ := do(t, base, call{body: gz(big), encoding: "gzip"})
	if status != 400 || code != "InvalidRequestException" {
		t.Fatalf("%d %s", status, code)
	}
	if DefaultLimits().MaxBytes != 5<<20 || DefaultLimits().MaxSpans != 10_000 {
		t.Fatal("default limits changed")
	}
	if s.SpanCount() != 0 {
		t.Fatal("stored an oversized request")
	}
}

// TestPartialSuccess: spans with an all-zero trace ID are refused in partial_success, the
// rest stored; the response is in the request's encoding.
func TestPartialSuccess(t *testing.T) {
	s, base := start(t, Config{})
	status, _, body := do(t, base, call{body: protoBody(t, makeTraces(5, 2, time.Now()))})
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	resp := ptraceotlp.NewExportResponse()
	if err := resp.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	if resp.PartialSuccess().RejectedSpans() != 2 || s.SpanCount() != 3 {
		t.Fatalf("rejected %d stored %d", resp.PartialSuccess().RejectedSpans(), s.SpanCount())
	}
	js, err := ptraceotlp.NewExportRequestFromTraces(makeTraces(2, 1, time.Now())).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	status, _, body = do(t, base, call{body: js, contentType: "application/json"})
	if status != 200 || !strings.Contains(string(body), `"rejectedSpans":"1"`) {
		t.Fatalf("%d %s", status, body)
	}
	if b := s.Batches(); len(b) != 2 || b[0].AccessKey != key {
		t.Fatalf("batches %+v", b)
	}
}

func TestFailNext(t *testing.T) {
	s, base := start(t, Config{})
	s.FailNext(429, 503)
	ok := protoBody(t, makeTraces(1, 0, time.Now()))
	for _, want := range []struct {
		status int
		code   string
	}{{429, "ThrottledException"}, {503, "ServiceUnavailableException"}, {200, ""}} {
		if status, code, _ := do(t, base, call{body: ok}); status != want.status || code != want.code {
			t.Fatalf("%d %s, want %d %s", status, code, want.status, want.code)
		}
	}
	if st := s.Stats(); st.Requests != 3 || st.Accepted != 1 || st.Errors["ThrottledException"] != 1 {
		t.Fatalf("stats %+v", st)
	}
}
