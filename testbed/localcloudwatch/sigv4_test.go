// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// TestSignatureVerification: with Credentials, requests signed by the SDK with the issued
// secret pass, and a wrong secret, an unknown key, a tampered body and a stale date are
// refused with CloudWatch Logs' codes and status.
func TestSignatureVerification(t *testing.T) {
	srv := localcloudwatch.New(localcloudwatch.Config{Credentials: map[string]string{"AKIDLOCAL": "secret"}})
	endpoint, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	good := newClient(endpoint, aws.NopRetryer{})
	mustCreate(t, good, "g", "s")
	_, err = good.PutLogEvents(ctx(t), &cloudwatchlogs.PutLogEventsInput{
		LogGroupName: aws.String("g"), LogStreamName: aws.String("s"),
		LogEvents: []types.InputLogEvent{{Message: aws.String("m"), Timestamp: aws.Int64(time.Now().UnixMilli())}},
	})
	if err != nil {
		t.Fatalf("correctly signed PutLogEvents refused: %v", err)
	}

	for _, tc := range []struct {
		name, key, secret, want string
	}{
		{"wrong secret", "AKIDLOCAL", "not-the-secret", "InvalidSignatureException"},
		{"unknown key", "AKIDOTHER", "secret", "UnrecognizedClientException"},
	} {
		c := cloudwatchlogs.New(cloudwatchlogs.Options{
			Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
			Credentials: credentials.NewStaticCredentialsProvider(tc.key, tc.secret, ""),
			Retryer:     aws.NopRetryer{},
		})
		_, err := c.CreateLogGroup(ctx(t), &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String("h")})
		if got := errCode(t, err); got != tc.want {
			t.Errorf("%s: %q, want %s", tc.name, got, tc.want)
		}
	}

	body := []byte(`{"logGroupName":"tampered"}`)
	for _, tc := range []struct {
		name     string
		sent     []byte
		signedAt time.Time
		region   string
		want     string
	}{
		{"signed as sent", body, time.Now(), "us-east-1", ""},
		{"tampered body", []byte(`{"logGroupName":"tampereD"}`), time.Now(), "us-east-1", "InvalidSignatureException"},
		{"signed 10 minutes ago", body, time.Now().Add(-10 * time.Minute), "us-east-1", "InvalidSignatureException"},
		{"another region", body, time.Now(), "eu-west-1", "InvalidSignatureException"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, code := rawCall(t, endpoint, "DescribeLogGroups", body, tc.sent, tc.signedAt, tc.region)
			if code != tc.want {
				t.Fatalf("code %q, want %q", code, tc.want)
			}
			if tc.want != "" && status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", status)
			}
		})
	}
}

// rawCall signs signedBody with the SDK's signer, sends sentBody, and returns the status and
// the "__type" of the answer ("" on success).
func rawCall(t *testing.T, endpoint, op string, signedBody, sentBody []byte, at time.Time, region string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, endpoint+"/", bytes.NewReader(sentBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "Logs_20140328."+op)
	req.ContentLength = int64(len(signedBody))
	sum := sha256.Sum256(signedBody)
	creds := aws.Credentials{AccessKeyID: "AKIDLOCAL", SecretAccessKey: "secret"}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "logs", region, at); err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(sentBody))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, ""
	}
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Message == "" {
		t.Fatalf("error body %q is not CloudWatch Logs' shape", raw)
	}
	return resp.StatusCode, e.Type
}
