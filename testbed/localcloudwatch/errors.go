// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"fmt"
	"net/http"
)

// Error codes the server answers with, as they appear in the "__type" field.
const (
	CodeInvalidParameter      = "InvalidParameterException"
	CodeResourceNotFound      = "ResourceNotFoundException"
	CodeResourceAlreadyExists = "ResourceAlreadyExistsException"
	CodeThrottling            = "ThrottlingException"
	CodeServiceUnavailable    = "ServiceUnavailableException"
	CodeTooManyTags           = "TooManyTagsException"
	CodeLimitExceeded         = "LimitExceededException"
	CodeUnknownOperation      = "UnknownOperationException"
	CodeSerialization         = "SerializationException"
	CodeMissingAuthentication = "MissingAuthenticationTokenException"
	CodeIncompleteSignature   = "IncompleteSignatureException"
)

// apiError is an error answered to the client as {"__type": code, "message": msg}.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func invalidParam(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, CodeInvalidParameter, fmt.Sprintf(format, args...)}
}

// constraintError is the message AWS gives when a request member breaks its model
// constraint.
func constraintError(value any, member, constraint string) *apiError {
	return invalidParam("1 validation error detected: Value '%v' at '%s' failed to satisfy constraint: %s",
		value, member, constraint)
}

func notFound(msg string) *apiError {
	return &apiError{http.StatusBadRequest, CodeResourceNotFound, msg}
}

func alreadyExists(msg string) *apiError {
	return &apiError{http.StatusBadRequest, CodeResourceAlreadyExists, msg}
}

var (
	errGroupNotFound  = notFound("The specified log group does not exist.")
	errStreamNotFound = notFound("The specified log stream does not exist.")
	errGroupExists    = alreadyExists("The specified log group already exists")
	errStreamExists   = alreadyExists("The specified log stream already exists")
	errBadToken       = invalidParam("The specified nextToken is invalid.")
	errThrottled      = &apiError{http.StatusBadRequest, CodeThrottling, "Rate exceeded"}
	errUnavailable    = &apiError{
		http.StatusServiceUnavailable, CodeServiceUnavailable,
		"The service cannot complete the request.",
	}
	errMissingAuth = &apiError{
		http.StatusBadRequest, CodeMissingAuthentication,
		"Missing Authentication Token",
	}
	errIncompleteSig = &apiError{
		http.StatusBadRequest, CodeIncompleteSignature,
		"Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters (AWS4-HMAC-SHA256).",
	}
)
