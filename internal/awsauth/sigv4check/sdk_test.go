// SPDX-License-Identifier: Apache-2.0

package sigv4check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// sdkSign signs r with the aws-sdk-go-v2 signer, as every AWS client in Go does.
func sdkSign(t testing.TB, r *http.Request, body []byte, creds aws.Credentials, service, region string, when time.Time) {
	t.Helper()
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, hex.EncodeToString(sum[:]), service, region, when); err != nil {
		t.Fatal(err)
	}
}

// serverSide turns a client request into what a Go server sees: Host in r.Host, the
// header map as sent.
func serverSide(r *http.Request) *http.Request {
	s := r.Clone(context.Background())
	s.Host = r.URL.Host
	if r.Host != "" {
		s.Host = r.Host
	}
	s.RequestURI = r.URL.RequestURI()
	return s
}

// TestDifferentialSDK: requests of many shapes signed by the SDK's signer verify, and each
// single change after signing is refused.
func TestDifferentialSDK(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	creds := aws.Credentials{AccessKeyID: "AKIDLOCAL", SecretAccessKey: "local/secret+key", SessionToken: "session-token"}
	v := &Verifier{
		Secrets: map[string]string{"AKIDLOCAL": "local/secret+key"},
		Tokens:  map[string]string{"AKIDLOCAL": "session-token"},
		Service: "xray", Region: "eu-west-1",
		Now: func() time.Time { return now.Add(2 * time.Minute) },
	}
	shapes := []struct {
		name    string
		method  string
		url     string
		headers map[string]string
		body    string
	}{
		{
			"otlp gzip", "POST", "https://xray.eu-west-1.amazonaws.com/v1/traces",
			map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"},
			"\x1f\x8b\x08\x00binary\x00\xff",
		},
		{
			"cloudwatch logs json", "POST", "https://logs.eu-west-1.amazonaws.com/",
			map[string]string{"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "Logs_20140328.PutLogEvents"},
			`{"logGroupName":"g"}`,
		},
		{"empty body", "POST", "http://127.0.0.1:4318/v1/traces", nil, ""},
		{"query with spaces and slashes", "GET", "https://xray.eu-west-1.amazonaws.com/a/b?z=1&a=x%20y&a=b%2Fc&empty=", nil, ""},
		{"escaped path", "GET", "https://xray.eu-west-1.amazonaws.com/a%20b/c%2Fd/%E1%88%B4", nil, ""},
		{
			"header spaces", "POST", "https://xray.eu-west-1.amazonaws.com/v1/traces",
			map[string]string{"X-Custom": "  a   b  c ", "Content-Type": "application/json"},
			"{}",
		},
		{"port in host", "POST", "http://localhost:8443/v1/traces", map[string]string{"Content-Type": "application/x-protobuf"}, "spans"},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			build := func() *http.Request {
				r, err := http.NewRequest(sh.method, sh.url, bytes.NewReader([]byte(sh.body)))
				if err != nil {
					t.Fatal(err)
				}
				for k, val := range sh.headers {
					r.Header.Set(k, val)
				}
				sdkSign(t, r, []byte(sh.body), creds, "xray", "eu-west-1", now)
				return serverSide(r)
			}
			if _, err := v.Verify(build(), []byte(sh.body)); err != nil {
				t.Fatalf("SDK-signed request refused: %v", err)
			}
			mutations := []struct {
				name string
				mut  func(r *http.Request) []byte
				want Kind
			}{
				{"body", func(*http.Request) []byte { return []byte(sh.body + "x") }, SignatureMismatch},
				{"method", func(r *http.Request) []byte { r.Method = "PUT"; return []byte(sh.body) }, SignatureMismatch},
				{"path", func(r *http.Request) []byte { r.URL.Path += "x"; r.URL.RawPath = ""; return []byte(sh.body) }, SignatureMismatch},
				{"query", func(r *http.Request) []byte { r.URL.RawQuery += "&extra=1"; return []byte(sh.body) }, SignatureMismatch},
				{"host", func(r *http.Request) []byte { r.Host = "evil.example.com"; return []byte(sh.body) }, SignatureMismatch},
				{"token", func(r *http.Request) []byte { r.Header.Set("X-Amz-Security-Token", "other"); return []byte(sh.body) }, InvalidToken},
				{"date", func(r *http.Request) []byte {
					r.Header.Set("X-Amz-Date", now.Add(time.Second).Format(timeFormat))
					return []byte(sh.body)
				}, SignatureMismatch},
			}
			for _, m := range mutations {
				r := build()
				body := m.mut(r)
				_, err := v.Verify(r, body)
				if err == nil {
					t.Errorf("%s changed after signing: accepted", m.name)
					continue
				}
				var e *Error
				if !errors.As(err, &e) || e.Kind != m.want {
					t.Errorf("%s changed: %v, want kind %d", m.name, err, m.want)
				}
			}
		})
	}
}

// FuzzVerify: any request the SDK signs verifies, and no input makes Verify panic.
func FuzzVerify(f *testing.F) {
	f.Add("POST", "/v1/traces", "a=b&c=d", "x-custom", "  v  w ", []byte("body"), "AWS4-HMAC-SHA256 Credential=K/20260301/eu-west-1/xray/aws4_request, SignedHeaders=host, Signature=00")
	f.Add("GET", "/%E1%88%B4/x y", "", "x-a", "", []byte{}, "Bearer")
	f.Add("PUT", "//a/./b/../c", "q=%20&q=+", "x-b", "\t", []byte{0xff, 0}, "AWS4-HMAC-SHA256 Credential=/,,,")
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	v := &Verifier{Secrets: map[string]string{"K": "S"}, Service: "xray", Region: "eu-west-1", Now: func() time.Time { return now }}
	f.Fuzz(func(t *testing.T, method, path, query, hname, hvalue string, body []byte, rawAuth string) {
		// Arbitrary Authorization headers never panic and never pass without the secret.
		u := &url.URL{Scheme: "https", Host: "xray.eu-west-1.amazonaws.com", Path: path, RawQuery: query}
		raw := &http.Request{Method: http.MethodPost, URL: u, Host: u.Host, Header: http.Header{"Authorization": {rawAuth}, "X-Amz-Date": {now.Format(timeFormat)}}}
		if _, err := v.Verify(raw, body); err == nil {
			t.Fatalf("unsigned request accepted: %q", rawAuth)
		}
		// A request the SDK signs verifies.
		r, err := http.NewRequest(method, "https://xray.eu-west-1.amazonaws.com/", bytes.NewReader(body))
		if err != nil {
			return
		}
		r.URL.Path = "/" + strings.TrimLeft(path, "/")
		r.URL.RawQuery = query
		if _, qerr := url.ParseQuery(query); qerr != nil {
			return
		}
		if hname = strings.ToLower(hname); validHeaderName(hname) && !ignoredBySigner(hname) {
			r.Header.Set(hname, strings.Map(func(c rune) rune {
				if c < 0x20 || c == 0x7f {
					return -1
				}
				return c
			}, hvalue))
		}
		sdkSign(t, r, body, aws.Credentials{AccessKeyID: "K", SecretAccessKey: "S"}, "xray", "eu-west-1", now)
		if _, err := v.Verify(serverSide(r), body); err != nil {
			t.Fatalf("SDK-signed %s %q?%q refused: %v", r.Method, r.URL.EscapedPath(), query, err)
		}
	})
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// ignoredBySigner are headers the SDK does not sign, or sets itself.
func ignoredBySigner(h string) bool {
	switch h {
	case "authorization", "user-agent", "x-amzn-trace-id", "expect", "transfer-encoding", "host",
		"content-length", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256", "date":
		return true
	}
	return false
}
