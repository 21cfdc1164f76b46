package encoding

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
)

// TestPutLogEventsBodyMatchesSDK compares our body with the one the SDK's own serializer
// sends, as JSON values.
func TestPutLogEventsBodyMatchesSDK(t *testing.T) {
	var sdkBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sdkBody, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	client := cloudwatchlogs.New(cloudwatchlogs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""),
	})
	events := []types.InputLogEvent{
		{Timestamp: aws.Int64(1), Message: aws.String(`{"body":"a \"quoted\" line\n","x":"\u00e9\u2028"}`)},
		{Timestamp: aws.Int64(1700000000123), Message: aws.String("tab\there \x01 ctl / slash \\ back 中文 😀")},
	}
	in := &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String("g/1"), LogStreamName: aws.String("node.var.log.x"), LogEvents: events}
	if _, err := client.PutLogEvents(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	escaped := make([]types.InputLogEvent, len(events))
	for i, e := range events {
		msg, size := Escape(nil, *e.Message)
		if size != len(*e.Message) {
			t.Errorf("size of %q = %d, want %d", *e.Message, size, len(*e.Message))
		}
		escaped[i] = types.InputLogEvent{Timestamp: e.Timestamp, Message: aws.String(string(msg))}
	}
	ours := AppendPutLogEventsBody(nil, "g/1", "node.var.log.x", escaped)
	var a, b any
	if err := json.Unmarshal(sdkBody, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ours, &b); err != nil {
		t.Fatalf("%v: %s", err, ours)
	}
	if ja, jb := mustJSON(a), mustJSON(b); ja != jb {
		t.Fatalf("bodies differ:\nsdk  %s\nours %s", ja, jb)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
