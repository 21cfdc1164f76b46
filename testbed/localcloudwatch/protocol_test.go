// SPDX-License-Identifier: Apache-2.0

package localcloudwatch_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

const fakeAuth = "AWS4-HMAC-SHA256 Credential=AKID/20260301/us-east-1/logs/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=00"

// raw sends one hand-made API request and returns the status, the __type and the body.
func raw(t *testing.T, endpoint string, header map[string]string, body string) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %q is not JSON: %v", b, err)
	}
	if resp.Header.Get("x-amzn-RequestId") == "" || resp.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
		t.Fatalf("headers %v", resp.Header)
	}
	typ, _ := m["__type"].(string)
	return resp.StatusCode, typ, m
}

func apiHeaders(op string) map[string]string {
	return map[string]string{
		"X-Amz-Target": "Logs_20140328." + op, "Content-Type": "application/x-amz-json-1.1", "Authorization": fakeAuth,
	}
}

func TestProtocol(t *testing.T) {
	srv := localcloudwatch.New(localcloudwatch.Config{})
	endpoint, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	with := func(op string, edit func(map[string]string)) map[string]string {
		h := apiHeaders(op)
		edit(h)
		return h
	}
	cases := []struct {
		name       string
		header     map[string]string
		body       string
		wantStatus int
		wantType   string
	}{
		{"create", apiHeaders("CreateLogGroup"), `{"logGroupName":"g"}`, 200, ""},
		{"create again", apiHeaders("CreateLogGroup"), `{"logGroupName":"g"}`, 400, "ResourceAlreadyExistsException"},
		{"unsigned", with("CreateLogGroup", func(h map[string]string) { delete(h, "Authorization") }), `{"logGroupName":"h"}`, 400, "MissingAuthenticationTokenException"},
		{"not sigv4", with("CreateLogGroup", func(h map[string]string) { h["Authorization"] = "Bearer x" }), `{"logGroupName":"h"}`, 400, "IncompleteSignatureException"},
		{"unknown operation", apiHeaders("StartQuery"), `{}`, 400, "UnknownOperationException"},
		{"wrong service prefix", with("CreateLogGroup", func(h map[string]string) { h["X-Amz-Target"] = "Kinesis_20131202.CreateLogGroup" }), `{}`, 400, "UnknownOperationException"},
		{"wrong content type", with("CreateLogGroup", func(h map[string]string) { h["Content-Type"] = "application/json" }), `{"logGroupName":"h"}`, 400, "UnknownOperationException"},
		{"malformed JSON", apiHeaders("CreateLogGroup"), `{"logGroupName":`, 400, "SerializationException"},
		{"wrong member type", apiHeaders("PutRetentionPolicy"), `{"logGroupName":"g","retentionInDays":"seven"}`, 400, "SerializationException"},
		{"missing required member", apiHeaders("CreateLogGroup"), `{}`, 400, "InvalidParameterException"},
		{"create stream", apiHeaders("CreateLogStream"), `{"logGroupName":"g","logStreamName":"s"}`, 200, ""},
		{"event without timestamp", apiHeaders("PutLogEvents"), `{"logGroupName":"g","logStreamName":"s","logEvents":[{"message":"m"}]}`, 400, "InvalidParameterException"},
		{"event without message", apiHeaders("PutLogEvents"), `{"logGroupName":"g","logStreamName":"s","logEvents":[{"timestamp":1}]}`, 400, "InvalidParameterException"},
		{"negative timestamp", apiHeaders("PutLogEvents"), `{"logGroupName":"g","logStreamName":"s","logEvents":[{"timestamp":-1,"message":"m"}]}`, 400, "InvalidParameterException"},
		{"sequence token ignored", apiHeaders("PutLogEvents"), `{"logGroupName":"g","logStreamName":"s","sequenceToken":"bogus","logEvents":[{"timestamp":1,"message":"m"}]}`, 200, ""},
		{"empty body is an empty object", apiHeaders("DescribeLogGroups"), ``, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, typ, body := raw(t, endpoint, tc.header, tc.body)
			if status != tc.wantStatus || typ != tc.wantType {
				t.Fatalf("status %d type %q body %v; want %d %q", status, typ, body, tc.wantStatus, tc.wantType)
			}
			if typ != "" {
				if msg, _ := body["message"].(string); msg == "" && typ != "UnknownOperationException" {
					t.Fatalf("error without message: %v", body)
				}
			}
		})
	}
	// The one accepted event above is 1 ms after the epoch: rejected as too old, with
	// AWS's exclusive end index.
	_, _, body := raw(t, endpoint, apiHeaders("PutLogEvents"), `{"logGroupName":"g","logStreamName":"s","logEvents":[{"timestamp":1,"message":"m"}]}`)
	info, _ := body["rejectedLogEventsInfo"].(map[string]any)
	if info["tooOldLogEventEndIndex"] != float64(1) || body["nextSequenceToken"] == "" {
		t.Fatalf("response %v", body)
	}
}

func TestAllowUnsigned(t *testing.T) {
	srv := localcloudwatch.New(localcloudwatch.Config{AllowUnsigned: true})
	endpoint, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	h := apiHeaders("CreateLogGroup")
	delete(h, "Authorization")
	if status, typ, _ := raw(t, endpoint, h, `{"logGroupName":"g"}`); status != 200 {
		t.Fatalf("unsigned request refused: %d %s", status, typ)
	}
}

func TestLocalEndpoints(t *testing.T) {
	srv, c := start(t, localcloudwatch.Config{})
	endpoint := "http://" + srv.Addr()
	mustCreate(t, c, "g", "s")
	put(t, c, "g", "s", []int64{nowMillis() - 2, nowMillis() - 1}, "first", "second")

	get := func(path string, v any) int {
		t.Helper()
		resp, err := http.Get(endpoint + path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	var sum localcloudwatch.Summary
	if get("/local/summary", &sum) != 200 || len(sum.Groups) != 1 || sum.Groups[0].Events != 2 ||
		len(sum.Groups[0].StreamList) != 1 || sum.Stats.EventsAccepted != 2 {
		t.Fatalf("summary %+v", sum)
	}
	var evs []localcloudwatch.Event
	if get("/local/events?group=g&stream=s&limit=1", &evs) != 200 || len(evs) != 1 || evs[0].Message != "second" {
		t.Fatalf("events %+v", evs)
	}
	if get("/local/events?group=g&stream=s&limit=0", &evs) != 200 || len(evs) != 2 || evs[0].Message != "first" {
		t.Fatalf("all events %+v", evs)
	}
	var e map[string]string
	if get("/local/events?group=g&stream=nope", &e) != 404 {
		t.Fatalf("missing stream: %v", e)
	}
	resp, err := http.Post(endpoint+"/local/faults", "application/json", strings.NewReader(`{"throttleRate":0.5,"latency":"10ms","operations":["PutLogEvents"]}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("set faults: %v %v", err, resp)
	}
	_ = resp.Body.Close()
	if f := srv.Faults(); f.ThrottleRate != 0.5 || f.Latency != localcloudwatch.Duration(10e6) || len(f.Operations) != 1 {
		t.Fatalf("faults %+v", f)
	}
	resp, _ = http.Post(endpoint+"/local/faults", "application/json", strings.NewReader(`{"throttleRate":2}`))
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("invalid faults accepted: %d", resp.StatusCode)
	}
	_ = resp.Body.Close()
	resp, _ = http.Post(endpoint+"/local/reset", "application/json", nil)
	_ = resp.Body.Close()
	if len(srv.Groups()) != 0 || srv.Stats().EventsAccepted != 0 {
		t.Fatal("reset left state")
	}
}
