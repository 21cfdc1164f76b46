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
	classTransient              // 5xx or transport failure: retry after a backoff
	classCancelled              // the caller's context ended
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

// transientCodes are error codes worth retrying that are not throttles.
var transientCodes = map[string]bool{
	"ServiceUnavailableException": true,
	"ServiceUnavailable":          true,
	"InternalFailure":             true,
	"InternalServerError":         true,
	"InternalError":               true,
	"RequestTimeout":              true,
	"RequestTimeoutException":     true,
	"ExpiredTokenException":       true, // credentials refresh on the next attempt
	"ExpiredToken":                true,
}

func classify(err error) class {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return classCancelled
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
		case transientCodes[code]:
			return classTransient
		}
	}
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) {
		if respErr.Response == nil || respErr.Response.Response == nil {
			return classTransient // no response at all
		}
		switch status := respErr.HTTPStatusCode(); {
		case status == 0:
			// The SDK wraps a request that got no response at all (connection refused or
			// reset, a server that is down) as a response error without a status.
			return classTransient
		case status == http.StatusTooManyRequests:
			return classThrottle
		case status >= 500:
			return classTransient
		}
		return classPermanent
	}
	if apiErr != nil {
		return classPermanent
	}
	// No HTTP response and no API error: the request did not complete (connection refused,
	// reset, DNS, TLS). Retrying is safe for PutLogEvents only in the at-least-once sense.
	return classTransient
}
