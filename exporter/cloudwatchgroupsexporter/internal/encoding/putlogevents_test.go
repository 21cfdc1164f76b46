// SPDX-License-Identifier: Apache-2.0

package encoding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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
	ours, err := io.ReadAll(NewPutLogEventsBody("g/1", "node.var.log.x", escaped))
	if err != nil {
		t.Fatal(err)
	}
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

// The bodies below are written by hand: every combination of the optional fields, names that
// need escaping, no events, and the longest timestamps.
func TestPutLogEventsBody(t *testing.T) {
	tests := []struct {
		name          string
		group, stream string
		events        []types.InputLogEvent
		want          string
	}{
		{
			name: "no events", group: "g", stream: "s",
			want: `{"logGroupName":"g","logStreamName":"s","logEvents":[]}`,
		},
		{
			name: "one event", group: "/aws/containerinsights/c/application", stream: "node-1.pod_ns_c",
			events: []types.InputLogEvent{{Timestamp: aws.Int64(1700000000123), Message: aws.String(`{\"body\":\"x\"}`)}},
			want: `{"logGroupName":"/aws/containerinsights/c/application","logStreamName":"node-1.pod_ns_c","logEvents":[` +
				`{"timestamp":1700000000123,"message":"{\"body\":\"x\"}"}]}`,
		},
		{
			name: "names escaped", group: "g\"1", stream: "s\u00e9\n",
			events: []types.InputLogEvent{{Timestamp: aws.Int64(0), Message: aws.String("")}},
			want:   `{"logGroupName":"g\"1","logStreamName":"sé\n","logEvents":[{"timestamp":0,"message":""}]}`,
		},
		{
			name: "fields left out", group: "g", stream: "s",
			events: []types.InputLogEvent{
				{Timestamp: aws.Int64(-1)},
				{Message: aws.String("m")},
				{},
				{Timestamp: aws.Int64(math.MinInt64), Message: aws.String("a")},
				{Timestamp: aws.Int64(math.MaxInt64), Message: aws.String("b")},
			},
			want: `{"logGroupName":"g","logStreamName":"s","logEvents":[{"timestamp":-1},{"message":"m"},{},` +
				`{"timestamp":-9223372036854775808,"message":"a"},{"timestamp":9223372036854775807,"message":"b"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, piece := range []int{1, 3, 17, 512, 1 << 20} {
				body := NewPutLogEventsBody(tt.group, tt.stream, tt.events)
				if body.Len() != len(tt.want) {
					t.Errorf("Len() = %d, want %d", body.Len(), len(tt.want))
				}
				if got := readInPieces(t, body, piece); got != tt.want {
					t.Fatalf("read in pieces of %d:\n got %s\nwant %s", piece, got, tt.want)
				}
				if body.Len() != 0 {
					t.Errorf("Len() after reading all = %d", body.Len())
				}
			}
		})
	}
}

func readInPieces(t *testing.T, r io.Reader, piece int) string {
	t.Helper()
	var out []byte
	p := make([]byte, piece)
	for range 1 << 22 {
		n, err := r.Read(p)
		out = append(out, p[:n]...)
		if errors.Is(err, io.EOF) {
			return string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal("Read returned nothing and no error")
		}
	}
	t.Fatal("Read never ended")
	return ""
}

// The SDK reads a body twice (the payload hash, then the transport) and seeks back between:
// every position read from, after any amount read before, gives the rest of the same body.
func TestPutLogEventsBodySeek(t *testing.T) {
	events := []types.InputLogEvent{
		{Timestamp: aws.Int64(1700000000000), Message: aws.String("first line")},
		{Timestamp: aws.Int64(1700000000001), Message: aws.String("second")},
	}
	want := `{"logGroupName":"g","logStreamName":"s","logEvents":[` +
		`{"timestamp":1700000000000,"message":"first line"},{"timestamp":1700000000001,"message":"second"}]}`
	for readFirst := 0; readFirst <= len(want); readFirst++ {
		for _, to := range []int{0, 1, 40, readFirst, len(want) - 1, len(want)} {
			body := NewPutLogEventsBody("g", "s", events)
			if _, err := io.ReadFull(body, make([]byte, readFirst)); err != nil {
				t.Fatal(err)
			}
			pos, err := body.Seek(int64(to), io.SeekStart)
			if err != nil || pos != int64(to) {
				t.Fatalf("Seek(%d) after %d read = %d, %v", to, readFirst, pos, err)
			}
			if cur, _ := body.Seek(0, io.SeekCurrent); cur != int64(to) {
				t.Fatalf("Seek(0, current) = %d, want %d", cur, to)
			}
			rest, err := io.ReadAll(body)
			if err != nil || string(rest) != want[to:] {
				t.Fatalf("after Seek(%d) from %d read %q, %v; want %q", to, readFirst, rest, err, want[to:])
			}
		}
	}
	body := NewPutLogEventsBody("g", "s", events)
	if end, err := body.Seek(0, io.SeekEnd); err != nil || end != int64(len(want)) {
		t.Fatalf("Seek(0, end) = %d, %v; want %d", end, err, len(want))
	}
	if _, err := body.Seek(-1, io.SeekStart); err == nil {
		t.Error("Seek to a negative position succeeded")
	}
}

// Events changed while their body is read (a caller's bug) end the body with an error, not
// a read that never ends.
func TestPutLogEventsBodyEventsChanged(t *testing.T) {
	events := []types.InputLogEvent{{Timestamp: aws.Int64(1), Message: aws.String("a longer message")}}
	body := NewPutLogEventsBody("g", "s", events)
	events[0].Message = aws.String("short")
	if _, err := io.ReadAll(body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadAll = %v, want %v", err, io.ErrUnexpectedEOF)
	}
	body = NewPutLogEventsBody("g", "s", events)
	events[0].Message = nil
	if _, err := body.Seek(int64(body.Len()), io.SeekStart); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Seek to the end = %v, want %v", err, io.ErrUnexpectedEOF)
	}
}

// WriteTo writes what Read would, also from the middle of the body.
func TestPutLogEventsBodyWriteTo(t *testing.T) {
	events := make([]types.InputLogEvent, 5000)
	for i := range events {
		events[i] = types.InputLogEvent{Timestamp: aws.Int64(int64(i)), Message: aws.String(strings.Repeat("x", i%300))}
	}
	all, err := io.ReadAll(NewPutLogEventsBody("g", "s", events))
	if err != nil {
		t.Fatal(err)
	}
	body := NewPutLogEventsBody("g", "s", events)
	if _, err := io.ReadFull(body, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	n, err := body.WriteTo(&out)
	if err != nil || n != int64(len(all)-1000) || !bytes.Equal(out.Bytes(), all[1000:]) {
		t.Fatalf("WriteTo = %d, %v; want the %d bytes after the first 1000", n, err, len(all)-1000)
	}
}

// FuzzPutLogEventsBody builds events from the input and checks the body, read in pieces of
// any size, against a body written in one piece the plain way, and that it is JSON.
func FuzzPutLogEventsBody(f *testing.F) {
	f.Add([]byte("g\x00s\x00\x01abc\x02\x03\x00"), uint16(7))
	f.Add([]byte("\"\x00\\\x00\x00\x00\xff"), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, piece uint16) {
		parts := bytes.Split(data, []byte{0})
		if len(parts) < 2 {
			return
		}
		group, stream := string(parts[0]), string(parts[1])
		var events []types.InputLogEvent
		for i, p := range parts[2:] {
			var e types.InputLogEvent
			if i%3 != 2 {
				e.Timestamp = aws.Int64(int64(i) * -1e12 * int64(len(p)-2))
			}
			if i%4 != 3 {
				msg, _ := Escape(nil, string(p))
				e.Message = aws.String(string(msg))
			}
			events = append(events, e)
		}
		want := plainBody(group, stream, events)
		body := NewPutLogEventsBody(group, stream, events)
		if body.Len() != len(want) {
			t.Fatalf("Len() = %d, want %d", body.Len(), len(want))
		}
		if got := readInPieces(t, body, int(piece%4096)+1); got != want {
			t.Fatalf("got %s\nwant %s", got, want)
		}
		if !json.Valid([]byte(want)) {
			t.Fatalf("not JSON: %s", want)
		}
	})
}

// plainBody writes a body in one piece, field by field.
func plainBody(group, stream string, events []types.InputLogEvent) string {
	var b strings.Builder
	b.WriteString(`{"logGroupName":` + string(appendString(nil, group)) + `,"logStreamName":` + string(appendString(nil, stream)) + `,"logEvents":[`)
	for i, e := range events {
		if i > 0 {
			b.WriteByte(',')
		}
		var fields []string
		if e.Timestamp != nil {
			fields = append(fields, `"timestamp":`+strconv.FormatInt(*e.Timestamp, 10))
		}
		if e.Message != nil {
			fields = append(fields, `"message":"`+*e.Message+`"`)
		}
		b.WriteString("{" + strings.Join(fields, ",") + "}")
	}
	b.WriteString("]}")
	return b.String()
}
