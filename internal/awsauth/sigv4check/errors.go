// SPDX-License-Identifier: Apache-2.0

package sigv4check

import "net/http"

// Kind classifies why a request was refused.
type Kind int

// The kinds of refusal, each answered with the code its service's protocol uses (Code).
const (
	// MissingAuthentication: no Authorization header.
	MissingAuthentication Kind = iota + 1
	// IncompleteSignature: the header is not AWS4-HMAC-SHA256 with Credential, SignedHeaders
	// and Signature, the scope is malformed, no date header, or host is not signed.
	IncompleteSignature
	// UnknownAccessKey: the access key ID is not known.
	UnknownAccessKey
	// InvalidToken: the session token is missing, wrong, or sent with a long-term key.
	InvalidToken
	// SignatureMismatch: the signature is not the one computed, or the scope names another
	// Region, service or day.
	SignatureMismatch
	// SignatureExpired: the request time is outside the allowed skew of the server clock.
	SignatureExpired
	// ContentSHA256Mismatch: an X-Amz-Content-Sha256 header does not match the body.
	ContentSHA256Mismatch
)

// Protocol is an AWS wire protocol; it decides the error code and HTTP status of a refusal.
type Protocol int

const (
	// AWSJSON is awsJson1_0/1_1 (CloudWatch Logs): codes in "__type", status 400.
	AWSJSON Protocol = iota + 1
	// RESTJSON is restJson1 (X-Ray, including its OTLP endpoint): codes in the
	// x-amzn-ErrorType header, status 403.
	RESTJSON
	// Query is awsQuery (STS): SignatureDoesNotMatch, InvalidClientTokenId, status 403
	// (IncompleteSignature 400).
	Query
)

// Error is a refusal: its kind and the message AWS gives for it.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Code(AWSJSON) + ": " + e.Message }

// Code returns the error code the protocol's services answer this refusal with.
func (e *Error) Code(p Protocol) string {
	if p == Query {
		switch e.Kind {
		case MissingAuthentication:
			return "MissingAuthenticationToken"
		case IncompleteSignature:
			return "IncompleteSignature"
		case UnknownAccessKey, InvalidToken:
			return "InvalidClientTokenId"
		default:
			return "SignatureDoesNotMatch"
		}
	}
	switch e.Kind {
	case MissingAuthentication:
		return "MissingAuthenticationTokenException"
	case IncompleteSignature:
		return "IncompleteSignatureException"
	case UnknownAccessKey, InvalidToken:
		return "UnrecognizedClientException"
	default:
		return "InvalidSignatureException"
	}
}

// Status returns the HTTP status the protocol's services answer this refusal with.
func (e *Error) Status(p Protocol) int {
	switch p {
	case AWSJSON:
		return http.StatusBadRequest
	case Query:
		if e.Kind == IncompleteSignature {
			return http.StatusBadRequest
		}
		return http.StatusForbidden
	default:
		return http.StatusForbidden
	}
}

// Messages AWS answers with.
const (
	msgMissing     = "Missing Authentication Token"
	msgIncomplete  = "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters (AWS4-HMAC-SHA256)."
	msgUnknownKey  = "The security token included in the request is invalid."
	msgMismatch    = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
	msgContentHash = "The provided 'x-amz-content-sha256' header does not match what was computed."
)
