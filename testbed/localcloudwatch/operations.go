// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// operation decodes a request body and runs one API operation.
type operation func(s *Server, body []byte) (any, *apiError)

// op adapts a typed operation to the operation signature.
func op[In any](f func(*Server, *In) (any, *apiError)) operation {
	return func(s *Server, body []byte) (any, *apiError) {
		in := new(In)
		if err := decode(body, in); err != nil {
			return nil, err
		}
		return f(s, in)
	}
}

// operations are the supported API operations by name.
var operations map[string]operation

func init() {
	operations = map[string]operation{
		"CreateLogGroup":        op((*Server).createLogGroup),
		"DeleteLogGroup":        op((*Server).deleteLogGroup),
		"DescribeLogGroups":     op((*Server).describeLogGroups),
		"PutRetentionPolicy":    op((*Server).putRetentionPolicy),
		"DeleteRetentionPolicy": op((*Server).deleteRetentionPolicy),
		"AssociateKmsKey":       op((*Server).associateKmsKey),
		"DisassociateKmsKey":    op((*Server).disassociateKmsKey),
		"TagLogGroup":           op((*Server).tagLogGroup),
		"UntagLogGroup":         op((*Server).untagLogGroup),
		"ListTagsLogGroup":      op((*Server).listTagsLogGroup),
		"TagResource":           op((*Server).tagResource),
		"UntagResource":         op((*Server).untagResource),
		"ListTagsForResource":   op((*Server).listTagsForResource),
		"CreateLogStream":       op((*Server).createLogStream),
		"DeleteLogStream":       op((*Server).deleteLogStream),
		"DescribeLogStreams":    op((*Server).describeLogStreams),
		"PutLogEvents":          decodePut,
		"GetLogEvents":          op((*Server).getLogEvents),
		"FilterLogEvents":       op((*Server).filterLogEvents),
	}
}

// decodePut decodes PutLogEvents bodies on the fast path, falling back to
// encoding/json for anything the fast path does not take.
func decodePut(s *Server, body []byte) (any, *apiError) {
	in := new(putLogEventsInput)
	if !decodePutLogEvents(body, in) {
		*in = putLogEventsInput{}
		if err := decode(body, in); err != nil {
			return nil, err
		}
	}
	return s.putLogEvents(in)
}

func isOperation(name string) bool {
	_, ok := operations[name]
	return ok
}

// Operations returns the names of the supported API operations.
func Operations() []string {
	out := make([]string, 0, len(operations))
	for name := range operations {
		out = append(out, name)
	}
	return out
}

type empty struct{}

// pageToken encodes an opaque pagination token from a kind and parts.
func pageToken(kind string, parts ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + "\x00" + strings.Join(parts, "\x00")))
}

// parsePageToken decodes a token made by pageToken with the same kind and n parts.
func parsePageToken(tok, kind string, n int) ([]string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return nil, false
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != n+1 || parts[0] != kind {
		return nil, false
	}
	return parts[1:], true
}

// limitParam validates an optional page size: default def, allowed 1..maxV.
func limitParam(limit *int32, def, maxV int) (int, *apiError) {
	if limit == nil {
		return def, nil
	}
	if *limit < 1 {
		return 0, constraintError(*limit, "limit", "Member must have value greater than or equal to 1")
	}
	if int(*limit) > maxV {
		return 0, constraintError(*limit, "limit", "Member must have value less than or equal to "+strconv.Itoa(maxV))
	}
	return int(*limit), nil
}
