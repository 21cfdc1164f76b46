// SPDX-License-Identifier: Apache-2.0

package objspans

import (
	"crypto/sha256"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Generation is the desired state an object's trace is about (design.md rule 1): the object's
// metadata.generation, with 0 (an object whose kind does not count generations, or a Pod
// created before the API server counted them) and 1 both meaning the object as created.
func Generation(g int64) int64 {
	if g < 1 {
		return 1
	}
	return g
}

// Sum is SHA-256 of "<uid>/<generation>/<what>", generation passed through Generation: the
// seed of every derived id (design.md rule 1).
func Sum(uid string, generation int64, what string) [32]byte {
	return sha256.Sum256([]byte(uid + "/" + strconv.FormatInt(Generation(generation), 10) + "/" + what))
}

// TraceID is the trace of an object's desired state when it carries no context: the first 16
// bytes of Sum(uid, generation, "root").
func TraceID(uid string, generation int64) pcommon.TraceID {
	sum := Sum(uid, generation, "root")
	return nonZeroTrace(sum)
}

// RootSpanID is the span id of the root span of that trace: bytes 16 to 24 of the same sum.
func RootSpanID(uid string, generation int64) pcommon.SpanID {
	sum := Sum(uid, generation, "root")
	var id pcommon.SpanID
	copy(id[:], sum[16:24])
	return nonZeroSpan(id)
}

// SpanID is the span id of the span covering what in an object's desired state: the first 8
// bytes of Sum(uid, generation, what).
func SpanID(uid string, generation int64, what string) pcommon.SpanID {
	sum := Sum(uid, generation, what)
	var id pcommon.SpanID
	copy(id[:], sum[:8])
	return nonZeroSpan(id)
}

func nonZeroTrace(sum [32]byte) pcommon.TraceID {
	var id pcommon.TraceID
	copy(id[:], sum[:16])
	if id.IsEmpty() {
		id[15] = 1
	}
	return id
}

func nonZeroSpan(id pcommon.SpanID) pcommon.SpanID {
	if id.IsEmpty() {
		id[7] = 1
	}
	return id
}
