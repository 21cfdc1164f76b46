// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

var putDecodeSeeds = []string{
	`{"logGroupName":"g","logStreamName":"s","logEvents":[{"timestamp":1700000000000,"message":"hello"}]}`,
	` { "logEvents" : [ { "message" : "a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00" , "timestamp" : -0 } , null , {} ] , "sequenceToken" : null } `,
	`{"logGroupName":null,"entity":{"keyAttributes":{"a":"b"},"attributes":{"n":[1,2.5e-3,true,false,null]}},"logEvents":[]}`,
	`{"LOGGROUPNAME":"case-insensitive"}`,
	`{"logEvents":[{"timestamp":1}],"logEvents":[{"message":"m"}]}`,
	`{"logEvents":[{"timestamp":1.5,"message":"m"}]}`,
	`{"logEvents":[{"timestamp":99999999999999999999,"message":"m"}]}`,
	`{"logEvents":[{"timestamp":"1","message":"m"}]}`,
	`{"logEvents":"x"}`,
	`{"logGroupName":"\ud800"}`,
	"{\"logGroupName\":\"\xff\"}",
	`{"logGroupName":"g"} trailing`,
	`{"logGroupName":"g",}`,
	`{}`,
	`null`,
	`[]`,
	``,
}

// FuzzDecodePutLogEvents checks that the fast decoder, whenever it accepts a body,
// gives exactly what encoding/json gives.
func FuzzDecodePutLogEvents(f *testing.F) {
	for _, s := range putDecodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast putLogEventsInput
		if !decodePutLogEvents(body, &fast) {
			return
		}
		var std putLogEventsInput
		if err := json.Unmarshal(body, &std); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json: %v", body, err)
		}
		if !reflect.DeepEqual(fast, std) {
			t.Fatalf("%q:\nfast %s\nstd  %s", body, dump(fast), dump(std))
		}
	})
}

func dump(in putLogEventsInput) string {
	b, _ := json.Marshal(in)
	return string(b)
}

func TestDecodePutLogEventsFastPath(t *testing.T) {
	cases := []struct {
		body string
		fast bool
	}{
		{putDecodeSeeds[0], true},
		{putDecodeSeeds[1], true},
		{putDecodeSeeds[2], true},
		{putDecodeSeeds[3], false},
		{putDecodeSeeds[4], false},
		{putDecodeSeeds[5], false},
		{putDecodeSeeds[9], true}, // a lone surrogate decodes to U+FFFD, as encoding/json does
		{putDecodeSeeds[10], false},
		{putDecodeSeeds[11], false},
	}
	for _, tc := range cases {
		var in putLogEventsInput
		if got := decodePutLogEvents([]byte(tc.body), &in); got != tc.fast {
			t.Errorf("%s: fast path %v, want %v", tc.body, got, tc.fast)
			continue
		}
		if !tc.fast {
			continue
		}
		var std putLogEventsInput
		if err := json.Unmarshal([]byte(tc.body), &std); err != nil {
			t.Errorf("%s: fast path accepted what encoding/json refuses: %v", tc.body, err)
		} else if !reflect.DeepEqual(in, std) {
			t.Errorf("%s:\nfast %s\nstd  %s", tc.body, dump(in), dump(std))
		}
	}
	var in putLogEventsInput
	decodePutLogEvents([]byte(putDecodeSeeds[1]), &in)
	if len(in.LogEvents) != 3 || *in.LogEvents[0].Message != "a\"b\\c/d\b\f\n\r\té😀" || *in.LogEvents[0].Timestamp != 0 {
		t.Fatalf("decoded %s", dump(in))
	}
}

// BenchmarkDecodePutLogEvents compares the fast decoder with encoding/json on a full
// 1 MiB batch (5,000 events of 183 bytes).
func BenchmarkDecodePutLogEvents(b *testing.B) {
	type ev struct {
		Timestamp int64  `json:"timestamp"`
		Message   string `json:"message"`
	}
	in := struct {
		LogGroupName  string `json:"logGroupName"`
		LogStreamName string `json:"logStreamName"`
		LogEvents     []ev   `json:"logEvents"`
	}{LogGroupName: "g", LogStreamName: "s"}
	for i := range 5000 {
		in.LogEvents = append(in.LogEvents, ev{1700000000000 + int64(i), fmt.Sprintf("I1122 00:00:00.%06d 1 main.go:42] \"request done\" path=\"/api/v1/items\" status=200 latency=\"%dms\" %s", i, i%97, strings.Repeat("x", 80))})
	}
	body, _ := json.Marshal(in)
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var out putLogEventsInput
			if !decodePutLogEvents(body, &out) || len(out.LogEvents) != 5000 {
				b.Fatal("fast path refused the batch")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var out putLogEventsInput
			if err := json.Unmarshal(body, &out); err != nil || len(out.LogEvents) != 5000 {
				b.Fatal(err)
			}
		}
	})
}
