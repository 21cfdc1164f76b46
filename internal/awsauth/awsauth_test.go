// SPDX-License-Identifier: Apache-2.0

package awsauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// stsError is the shape STS (awsQuery protocol) answers errors with.
const stsError = `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>IDPCommunicationError</Code><Message>The request could not be fulfilled because the identity provider (IDP) that was asked to verify the incoming identity token could not be reached.</Message></Error>
  <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>
</ErrorResponse>`

// TestAssumeRoleFailureIsMarkedAndRetried: an STS error while getting credentials is marked
// as a credential error, and the STS client keeps the SDK's retries.
func TestAssumeRoleFailureIsMarkedAndRetried(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, stsError)
	}))
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_STS", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")

	cfg, err := Load(context.Background(), Options{Region: "us-east-1", RoleARN: "arn:aws:iam::123456789012:role/r", SessionName: "s"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cfg.Credentials.Retrieve(context.Background())
	if err == nil {
		t.Fatal("Retrieve succeeded against a failing STS")
	}
	if !IsCredentialError(err) {
		t.Fatalf("not marked: %v", err)
	}
	var marked interface{ CredentialError() bool }
	if !errors.As(err, &marked) {
		t.Fatal("not recognizable through the interface")
	}
	if calls.Load() < 2 {
		t.Fatalf("STS called %d times: the SDK's retries are off for credential clients", calls.Load())
	}
}

// TestSTSRegionScopesAssumeRole: STSRegion is the Region the AssumeRole call is signed for
// (and sent to), while the configuration keeps Region.
func TestSTSRegionScopesAssumeRole(t *testing.T) {
	for _, tc := range []struct{ stsRegion, wantScope string }{
		{"", "/eu-west-1/sts/aws4_request"},
		{"us-east-1", "/us-east-1/sts/aws4_request"},
	} {
		var auth atomic.Value
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth.Store(r.Header.Get("Authorization"))
			w.Header().Set("Content-Type", "text/xml")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>no</Message></Error></ErrorResponse>`)
		}))
		t.Setenv("AWS_ENDPOINT_URL_STS", srv.URL)
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
		t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
		cfg, err := Load(context.Background(), Options{Region: "eu-west-1", RoleARN: "arn:aws:iam::123456789012:role/r", STSRegion: tc.stsRegion})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Region != "eu-west-1" {
			t.Fatalf("region %q", cfg.Region)
		}
		_, _ = cfg.Credentials.Retrieve(context.Background())
		srv.Close()
		got, _ := auth.Load().(string)
		if !strings.Contains(got, tc.wantScope) {
			t.Errorf("sts_region %q: Authorization %q, want scope %s", tc.stsRegion, got, tc.wantScope)
		}
	}
}
