// SPDX-License-Identifier: Apache-2.0

package awssigv4authextension

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-k8s/otelcol-k8s/extension/awssigv4authextension/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/internal/awsauth"
	"github.com/otelcol-k8s/otelcol-k8s/internal/awsauth/sigv4check"
)

const (
	testKey    = "AKIDLOCALTEST"
	testSecret = "local/test+secret"
)

// staticEnv gives the chain static credentials (and a session token when token is set).
func staticEnv(t *testing.T, key, secret, token string) {
	t.Setenv("AWS_ACCESS_KEY_ID", key)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_SESSION_TOKEN", token)
}

// verifyingServer is an HTTP endpoint that checks every request with the shared verifier and
// keeps the decoded bodies of the ones it accepts.
type verifyingServer struct {
	*httptest.Server
	v      *sigv4check.Verifier
	mu     sync.Mutex
	bodies []string
	errs   []*sigv4check.Error
}

func newVerifyingServer(t *testing.T, v *sigv4check.Verifier) *verifyingServer {
	s := &verifyingServer{v: v}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if _, err := s.v.Verify(r, raw); err != nil {
			var e *sigv4check.Error
			if !errors.As(err, &e) {
				t.Errorf("verifier error %v", err)
				return
			}
			s.mu.Lock()
			s.errs = append(s.errs, e)
			s.mu.Unlock()
			w.WriteHeader(e.Status(sigv4check.RESTJSON))
			return
		}
		body := raw
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err == nil {
				body, err = io.ReadAll(zr)
			}
			if err != nil {
				t.Errorf("gzip body: %v", err)
				w.WriteHeader(http.StatusBadRequest)
				return
			}
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(s.Close)
	return s
}

// startExtension creates and starts the extension with cfg.
func startExtension(t *testing.T, cfg *Config, tel component.TelemetrySettings) *authenticator {
	t.Helper()
	set := extensiontest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel
	ext, err := NewFactory().Create(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, ext.Shutdown(context.Background())) })
	return ext.(*authenticator)
}

// collectorClient is the HTTP client an otlp_http exporter builds: confighttp with the
// extension as authenticator.
func collectorClient(t *testing.T, ext *authenticator, endpoint string, compression configcompression.Type) *http.Client {
	t.Helper()
	id := component.MustNewID("aws_sigv4_auth")
	cc := confighttp.NewDefaultClientConfig()
	cc.Endpoint = endpoint
	cc.Compression = compression
	cc.Auth = configoptional.Some(configauth.Config{AuthenticatorID: id})
	client, err := cc.ToClient(context.Background(), map[component.ID]component.Component{id: ext}, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	return client
}

func post(t *testing.T, client *http.Client, url, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := client.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestSignedRequestsVerify: through the collector's own HTTP client, with and without gzip,
// every request arrives signed over the bytes sent; the same requests fail a server with
// another secret. Without the extension (or signing the uncompressed body) they are refused.
func TestSignedRequestsVerify(t *testing.T) {
	staticEnv(t, testKey, testSecret, "")
	for _, comp := range []configcompression.Type{configcompression.TypeGzip, ""} {
		t.Run(string(comp)+"compression", func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			srv := newVerifyingServer(t, &sigv4check.Verifier{
				Secrets: map[string]string{testKey: testSecret}, Service: "xray", Region: "us-west-2",
			})
			ext := startExtension(t, &Config{Region: "us-west-2", Service: "xray"}, tel.NewTelemetrySettings())
			client := collectorClient(t, ext, srv.URL, comp)
			body := strings.Repeat("span bytes ", 200)
			for range 3 {
				require.Equal(t, http.StatusOK, post(t, client, srv.URL+"/v1/traces", body))
			}
			srv.mu.Lock()
			assert.Equal(t, []string{body, body, body}, srv.bodies)
			assert.Empty(t, srv.errs)
			srv.mu.Unlock()
			assertSum(t, tel, "otelcol_extension_aws_sigv4_auth_requests_signed", 3)

			// A server holding another secret for the key refuses them.
			srv.v.Secrets = map[string]string{testKey: "another"}
			require.Equal(t, http.StatusForbidden, post(t, client, srv.URL+"/v1/traces", body))
			srv.mu.Lock()
			require.Len(t, srv.errs, 1)
			assert.Equal(t, "InvalidSignatureException", srv.errs[0].Code(sigv4check.RESTJSON))
			srv.mu.Unlock()
		})
	}
}

// TestWrongServiceOrRegionRefused: the scope names the configured service and Region.
func TestWrongServiceOrRegionRefused(t *testing.T) {
	staticEnv(t, testKey, testSecret, "")
	srv := newVerifyingServer(t, &sigv4check.Verifier{Secrets: map[string]string{testKey: testSecret}, Service: "xray", Region: "us-west-2"})
	for _, cfg := range []*Config{{Region: "us-west-2", Service: "logs"}, {Region: "eu-west-1", Service: "xray"}} {
		ext := startExtension(t, cfg, componenttest.NewNopTelemetrySettings())
		client := collectorClient(t, ext, srv.URL, "")
		assert.Equal(t, http.StatusForbidden, post(t, client, srv.URL+"/v1/traces", "x"), "%+v", cfg)
	}
}

// TestSessionTokenSigned: temporary credentials from the chain send their token.
func TestSessionTokenSigned(t *testing.T) {
	staticEnv(t, testKey, testSecret, "the-session-token")
	srv := newVerifyingServer(t, &sigv4check.Verifier{
		Secrets: map[string]string{testKey: testSecret},
		Tokens:  map[string]string{testKey: "the-session-token"},
		Service: "xray",
	})
	ext := startExtension(t, &Config{Region: "us-west-2", Service: "xray"}, componenttest.NewNopTelemetrySettings())
	require.Equal(t, http.StatusOK, post(t, collectorClient(t, ext, srv.URL, configcompression.TypeGzip), srv.URL+"/v1/traces", "spans"))
}

// TestCredentialsFailureIsMarkedAndNotSent: without credentials the request is not sent, and
// the error is a credential error (retryable), counted by reason.
func TestCredentialsFailureIsMarkedAndNotSent(t *testing.T) {
	staticEnv(t, "", "", "")
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	srv := newVerifyingServer(t, &sigv4check.Verifier{Secrets: map[string]string{testKey: testSecret}})
	ext := startExtension(t, &Config{Region: "us-west-2", Service: "xray"}, tel.NewTelemetrySettings())
	client := collectorClient(t, ext, srv.URL, "")
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/traces", strings.NewReader("x"))
	require.NoError(t, err)
	resp, err := client.Do(req)
	if resp != nil {
		_ = resp.Body.Close()
	}
	require.Error(t, err)
	assert.True(t, awsauth.IsCredentialError(err), "not marked: %v", err)
	srv.mu.Lock()
	assert.Empty(t, srv.bodies)
	assert.Empty(t, srv.errs, "a request reached the server")
	srv.mu.Unlock()
	assertSum(t, tel, "otelcol_extension_aws_sigv4_auth_signing_failures", 1)
}

// assumeRoleResponse is STS's AssumeRole answer (awsQuery XML).
const assumeRoleResponse = `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <AssumedRoleUser><AssumedRoleId>AROA3XFRBF535PLBIFPI4:events</AssumedRoleId><Arn>arn:aws:sts::123456789012:assumed-role/otelcol-traces/events</Arn></AssumedRoleUser>
    <Credentials>
      <AccessKeyId>ASIAROLEKEY</AccessKeyId>
      <SecretAccessKey>role/secret</SecretAccessKey>
      <SessionToken>role-token</SessionToken>
      <Expiration>2099-01-01T00:00:00Z</Expiration>
    </Credentials>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
</AssumeRoleResponse>`

// TestAssumeRole: with assume_role the requests are signed with the role's temporary
// credentials, obtained from STS in sts_region with the base credentials (themselves verified).
func TestAssumeRole(t *testing.T) {
	staticEnv(t, testKey, testSecret, "")
	stsVerifier := &sigv4check.Verifier{Secrets: map[string]string{testKey: testSecret}, Service: "sts", Region: "us-east-1"}
	var stsCalls int
	var stsMu sync.Mutex
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		stsMu.Lock()
		stsCalls++
		stsMu.Unlock()
		if _, err := stsVerifier.Verify(r, raw); err != nil {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if !strings.Contains(string(raw), "Action=AssumeRole") || !strings.Contains(string(raw), "RoleSessionName=events") {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		_, _ = io.WriteString(w, assumeRoleResponse)
	}))
	t.Cleanup(sts.Close)
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)

	srv := newVerifyingServer(t, &sigv4check.Verifier{
		Secrets: map[string]string{"ASIAROLEKEY": "role/secret"},
		Tokens:  map[string]string{"ASIAROLEKEY": "role-token"},
		Service: "xray", Region: "us-west-2",
	})
	ext := startExtension(t, &Config{Region: "us-west-2", Service: "xray", AssumeRole: AssumeRole{
		ARN: "arn:aws:iam::123456789012:role/otelcol-traces", SessionName: "events", STSRegion: "us-east-1",
	}}, componenttest.NewNopTelemetrySettings())
	client := collectorClient(t, ext, srv.URL, configcompression.TypeGzip)
	for range 2 {
		require.Equal(t, http.StatusOK, post(t, client, srv.URL+"/v1/traces", "spans"))
	}
	stsMu.Lock()
	assert.Equal(t, 1, stsCalls, "role credentials are cached")
	stsMu.Unlock()
}

// TestRoundTripperBeforeStart: a clear error, never a nil dereference.
func TestRoundTripperBeforeStart(t *testing.T) {
	ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), createDefaultConfig())
	require.NoError(t, err)
	_, err = ext.(*authenticator).RoundTripper(http.DefaultTransport)
	require.ErrorContains(t, err, "before Start")
	require.NoError(t, ext.Shutdown(context.Background()))
}

// TestStartWithoutRegion: no Region anywhere is a start error that says so.
func TestStartWithoutRegion(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), createDefaultConfig())
	require.NoError(t, err)
	err = ext.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, "no AWS region")
	require.NoError(t, ext.Shutdown(context.Background()))
}

// TestResignsRetriedRequest: a request object reused by a retry is signed afresh (a new date
// and signature), never sent with the previous attempt's headers.
func TestResignsRetriedRequest(t *testing.T) {
	staticEnv(t, testKey, testSecret, "")
	srv := newVerifyingServer(t, &sigv4check.Verifier{Secrets: map[string]string{testKey: testSecret}, Service: "xray"})
	ext := startExtension(t, &Config{Region: "us-west-2", Service: "xray"}, componenttest.NewNopTelemetrySettings())
	first := time.Now().Add(-time.Hour)
	ext.now = func() time.Time { return first }
	rt, err := ext.RoundTripper(http.DefaultTransport)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/traces", strings.NewReader("x"))
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "an hour-old signature is expired")
	assert.Empty(t, req.Header.Get("Authorization"), "the caller's request was modified")

	ext.now = time.Now
	req.Body = io.NopCloser(strings.NewReader("x"))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 stale")
	resp, err = rt.RoundTrip(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

func assertSum(t *testing.T, tel *componenttest.Telemetry, name string, want int64) {
	t.Helper()
	m, err := tel.GetMetric(name)
	require.NoError(t, err)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok)
	var got int64
	for _, dp := range sum.DataPoints {
		got += dp.Value
	}
	assert.Equal(t, want, got, name)
}
