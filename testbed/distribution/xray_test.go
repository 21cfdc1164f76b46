// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localxray"
)

const (
	xrayKey    = "AKIDLOCALXRAY"
	xraySecret = "local/xray+secret"
)

// xrayCollector runs bin/otelcol-k8s with an otlp receiver and an otlp_http exporter signing
// with aws_sigv4_auth towards the local X-Ray endpoint, with the given secret in the standard
// credential chain (or, with secret empty, only the variables of env). The exporter's queue is off, so the receiver's answer is the export's
// outcome: 200 once delivered (after retries), an error when the exporter gives up.
func xrayCollector(t *testing.T, xrayBase, secret string, env ...string) (otlpURL string) {
	t.Helper()
	bin := binary(t)
	port := freePort(t)
	cfg := fmt.Sprintf(`
extensions:
  aws_sigv4_auth:
    region: us-east-1
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
exporters:
  otlp_http/xray:
    traces_endpoint: %s/v1/traces
    compression: gzip
    auth:
      authenticator: aws_sigv4_auth
    sending_queue:
      enabled: false
    retry_on_failure:
      initial_interval: 50ms
      max_interval: 200ms
      max_elapsed_time: 20s
service:
  extensions: [aws_sigv4_auth]
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlp_http/xray]
`, port, xrayBase)
	path := filepath.Join(t.TempDir(), "xray.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config", path)
	if secret != "" {
		env = append(env, "AWS_ACCESS_KEY_ID="+xrayKey, "AWS_SECRET_ACCESS_KEY="+secret)
	} else {
		env = append(env, "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=")
	}
	cmd.Env = append(append(os.Environ(), env...), "AWS_SESSION_TOKEN=",
		"AWS_REGION=us-east-1", "AWS_PROFILE=", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		cancel()
		if t.Failed() {
			t.Logf("collector output:\n%s", logs.String())
		}
	})
	return fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port)
}

// startXRay runs the local X-Ray OTLP endpoint, knowing the test's key and secret.
func startXRay(t *testing.T) (*localxray.Server, string) {
	t.Helper()
	xr := localxray.New(localxray.Config{Credentials: map[string]string{xrayKey: xraySecret}})
	base, err := xr.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = xr.Close() })
	return xr, base
}

// spans returns n spans of one trace, started now.
func spans(n int) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "xray-test")
	ss := rs.ScopeSpans().AppendEmpty()
	now := time.Now()
	for i := range n {
		sp := ss.Spans().AppendEmpty()
		sp.SetName(fmt.Sprintf("span-%d", i))
		sp.SetTraceID(pcommon.TraceID{0xab, 1, 2, 3})
		sp.SetSpanID(pcommon.SpanID{0xcd, byte(i + 1)})
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
	}
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		panic(err)
	}
	return b
}

// send posts spans to the collector's OTLP receiver, waiting for it to listen, and returns
// the receiver's status.
func send(t *testing.T, url string, body []byte) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(body)) //nolint:noctx // bounded by the collector's own timeout
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			return resp.StatusCode
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector's OTLP receiver never answered: %v", err)
		}
		<-tick.C
	}
}

// TestXRayTracesSigned: the built distribution sends spans through otlp_http and
// aws_sigv4_auth (gzip) to the X-Ray OTLP endpoint stand-in, which verifies every signature;
// throttling and unavailability are retried until the spans arrive, once.
func TestXRayTracesSigned(t *testing.T) {
	xr, base := startXRay(t)
	url := xrayCollector(t, base, xraySecret)

	if status := send(t, url, spans(20)); status != http.StatusOK {
		t.Fatalf("receiver answered %d", status)
	}
	xr.FailNext(http.StatusTooManyRequests, http.StatusServiceUnavailable)
	if status := send(t, url, spans(5)); status != http.StatusOK {
		t.Fatalf("receiver answered %d after throttling", status)
	}
	st := xr.Stats()
	if xr.SpanCount() != 25 || st.Accepted != 2 {
		t.Fatalf("stored %d spans in %d requests, want 25 in 2 (stats %+v)", xr.SpanCount(), st.Accepted, st)
	}
	if st.Errors["ThrottledException"] != 1 || st.Errors["ServiceUnavailableException"] != 1 || len(st.Errors) != 2 {
		t.Fatalf("errors %v: want one throttle and one 503, retried, and no signature refusal", st.Errors)
	}
	for _, b := range xr.Batches() {
		if b.AccessKey != xrayKey {
			t.Fatalf("signed by %q", b.AccessKey)
		}
	}
}

// TestXRayWrongSecret: signed with a wrong secret, X-Ray answers 403
// InvalidSignatureException; the exporter treats it as permanent (one request, no retry) and
// nothing is stored.
func TestXRayWrongSecret(t *testing.T) {
	xr, base := startXRay(t)
	url := xrayCollector(t, base, "not-the-secret")

	status := send(t, url, spans(3))
	if status == http.StatusOK || status >= 500 {
		t.Fatalf("receiver answered %d, want a permanent (4xx) error", status)
	}
	st := xr.Stats()
	if st.Errors["InvalidSignatureException"] != 1 || st.Requests != 1 || xr.SpanCount() != 0 {
		t.Fatalf("stats %+v, stored %d: want exactly one refused request, not retried", st, xr.SpanCount())
	}
}

// TestXRayCredentialsOutage: the container credentials endpoint (EKS Pod Identity's kind of
// source) fails its first calls; the exporter treats the signing failure as transient and
// retries, nothing reaches X-Ray unsigned, and the spans arrive once, signed with the
// temporary credentials, when the endpoint recovers.
func TestXRayCredentialsOutage(t *testing.T) {
	xr := localxray.New(localxray.Config{
		Credentials: map[string]string{"ASIATEMPORARY": "temporary/secret"},
		Tokens:      map[string]string{"ASIATEMPORARY": "temporary-token"},
	})
	base, err := xr.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = xr.Close() })
	var calls atomic.Int64
	creds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) <= 4 { // more than one credentials refresh's own retries
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"AccessKeyId":"ASIATEMPORARY","SecretAccessKey":"temporary/secret","Token":"temporary-token","Expiration":%q}`,
			time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	}))
	t.Cleanup(creds.Close)
	url := xrayCollector(t, base, "", "AWS_CONTAINER_CREDENTIALS_FULL_URI="+creds.URL+"/creds")

	if status := send(t, url, spans(4)); status != http.StatusOK {
		t.Fatalf("receiver answered %d: the credentials outage was not retried", status)
	}
	st := xr.Stats()
	if calls.Load() <= 4 || xr.SpanCount() != 4 || st.Requests != 1 || len(st.Errors) != 0 {
		t.Fatalf("credential calls %d, stored %d, stats %+v: want the spans once, after the outage, in one signed request", calls.Load(), xr.SpanCount(), st)
	}
}
