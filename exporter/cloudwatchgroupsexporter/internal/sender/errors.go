// SPDX-License-Identifier: Apache-2.0

package sender

import (
	"context"
	"errors"
	"net/http"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// class is how a failed call is handled.
type class int

const (
	classPermanent class = iota // do not retry
	classNotFound               // the group or stream is missing: create it, then retry
	classExists                 // a create found the resource already there
	classThrottle               // retry after a backoff, counted as a throttle
	classTransient              // 5xx, transport, credentials or unknown failure: retry after a backoff
	classCancelled              // the caller's context ended or the sender is stopping
)

// throttleCodes are the error codes CloudWatch Logs and the AWS SDK use for rate limiting.
// CloudWatch Logs' LimitExceededException is not one: it means a resource count quota (too
// many log groups), which waiting does not fix, so it is permanent.
var throttleCodes = map[string]bool{
	"ThrottlingException":                    true,
	"Throttling":                             true,
	"ThrottledException":                     true,
	"TooManyRequestsException":               true,
	"RequestLimitExceeded":                   true,
	"RequestThrottled":                       true,
	"RequestThrottledException":              true,
	"ProvisionedThroughputExceededException": true,
}

// permanentCodes are the errors that repeating the same request cannot fix: the request
// itself is wrong, or an account-wide resource count is reached. Every other error, including
// codes this list does not know, is retried: a batch is dropped only for a known reason.
// Access and credential errors (AccessDeniedException, UnrecognizedClientException,
// ExpiredTokenException, InvalidSignatureException) are not here: an IAM change being
// propagated, an STS outage or a credential refresh fixes them, and until then the queue
// holds the data.
var permanentCodes = map[string]bool{
	"InvalidParameterException":     true,
	"ValidationException":           true,
	"SerializationException":        true,
	"UnsupportedOperationException": true,
	"InvalidOperationException":     true,
	"MalformedQueryException":       true,
	"DataAlreadyAcceptedException":  true,
	"LimitExceededException":        true,
	"UnknownOperationException":     true,
	"MissingAction":                 true,
	"InvalidAction":                 true,
}

// errStopping is returned by waits that the sender's Stop cut short.
var errStopping = errors.New("sender stopping")

// credentialError marks a failure to get credentials (STS, IMDS, web identity, container
// endpoint): the call never reached CloudWatch, and the provider is asked again next time.
type credentialError interface{ CredentialError() bool }

func classify(err error) class {
	if errors.Is(err, errStopping) {
		return classCancelled
	}
	var perm *PermanentError
	if errors.As(err, &perm) {
		return classPermanent
	}
	var credErr credentialError
	if errors.As(err, &credErr) && credErr.CredentialError() {
		return classTransient
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		code := apiErr.ErrorCode()
		switch {
		case code == "ResourceNotFoundException":
			return classNotFound
		case code == "ResourceAlreadyExistsException":
			return classExists
		case throttleCodes[code]:
			return classThrottle
		case permanentCodes[code]:
			return classPermanent
		}
	}
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) && respErr.Response != nil && respErr.Response.Response != nil &&
		respErr.HTTPStatusCode() == http.StatusTooManyRequests {
		return classThrottle
	}
	// Unknown codes, 5xx, 4xx without a known permanent code, transport failures (connection
	// refused or reset, DNS, TLS) and HTTP client timeouts: retry. A timeout of the HTTP
	// client wraps context.DeadlineExceeded too; only the caller's own context ending is a
	// cancellation, which classifyCtx checks.
	return classTransient
}

// classifyCtx classifies err of a call made with ctx: when ctx itself has ended the call was
// canceled by the caller, whatever the error says.
func classifyCtx(ctx context.Context, err error) class {
	if ctx.Err() != nil {
		return classCancelled
	}
	return classify(err)
}
