package encoding

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
)

// PutLogEventsBodySize is the room AppendPutLogEventsBody needs for a body with these names
// and events, the names' escapes aside.
func PutLogEventsBodySize(group, stream string, events []types.InputLogEvent) int {
	size := 64 + len(group) + len(stream)
	for _, e := range events {
		if e.Message != nil {
			size += len(*e.Message) + 40
		}
	}
	return size
}

// AppendPutLogEventsBody appends the awsJson1_1 body of a PutLogEvents request to dst: the
// same document the SDK's serializer writes, built in one pre-sized buffer. The events'
// messages are already escaped (AppendMessage's form, or Escape's) and are written as they
// are; the group and stream names are escaped here.
func AppendPutLogEventsBody(dst []byte, group, stream string, events []types.InputLogEvent) []byte {
	if size := PutLogEventsBodySize(group, stream, events); cap(dst)-len(dst) < size {
		grown := make([]byte, len(dst), len(dst)+size)
		copy(grown, dst)
		dst = grown
	}
	dst = append(dst, `{"logGroupName":`...)
	dst = appendString(dst, group)
	dst = append(dst, `,"logStreamName":`...)
	dst = appendString(dst, stream)
	dst = append(dst, `,"logEvents":[`...)
	for i, e := range events {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		if e.Timestamp != nil {
			dst = append(dst, `"timestamp":`...)
			dst = strconv.AppendInt(dst, *e.Timestamp, 10)
			if e.Message != nil {
				dst = append(dst, ',')
			}
		}
		if e.Message != nil {
			dst = append(dst, `"message":`...)
			dst = append(dst, '"')
			dst = append(dst, *e.Message...)
			dst = append(dst, '"')
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// Escape appends msg escaped as the content of a JSON string (without the quotes), the form
// AppendMessage writes, and returns it with msg's size as CloudWatch counts it (invalid UTF-8
// counts as the U+FFFD it becomes).
func Escape(dst []byte, msg string) ([]byte, int) {
	start := len(dst)
	dst, added := appendEscaped(dst, msg, once, unquoted)
	return dst, len(dst) - start - added
}
