package localcloudwatch

import (
	"encoding/json"
	"reflect"
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
		{putDecodeSeeds[9], false},
		{putDecodeSeeds[10], false},
		{putDecodeSeeds[11], false},
	}
	for _, tc := range cases {
		var in putLogEventsInput
		if got := decodePutLogEvents([]byte(tc.body), &in); got != tc.fast {
			t.Errorf("%s: fast path %v, want %v", tc.body, got, tc.fast)
		}
	}
	var in putLogEventsInput
	decodePutLogEvents([]byte(putDecodeSeeds[1]), &in)
	if len(in.LogEvents) != 3 || *in.LogEvents[0].Message != "a\"b\\c/d\b\f\n\r\té😀" || *in.LogEvents[0].Timestamp != 0 {
		t.Fatalf("decoded %s", dump(in))
	}
}
