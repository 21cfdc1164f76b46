// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"errors"
	"net/http"

	"github.com/otelcol-k8s/otelcol-k8s/internal/awsauth/sigv4check"
)

// signingName is CloudWatch Logs' SigV4 signing name.
const signingName = "logs"

// verifySignature checks the SigV4 signature of a signed request over its body when the
// server was given Credentials, and answers a bad one with the awsJson code and status.
func (s *Server) verifySignature(r *http.Request, body []byte) *apiError {
	if len(s.cfg.Credentials) == 0 || r.Header.Get("Authorization") == "" {
		return nil // no credentials to check against, or unsigned and allowed (checkSignature)
	}
	v := sigv4check.Verifier{Secrets: s.cfg.Credentials, Service: signingName, Region: s.cfg.Region}
	if _, err := v.Verify(r, body); err != nil {
		var e *sigv4check.Error
		if !errors.As(err, &e) {
			return &apiError{http.StatusBadRequest, CodeIncompleteSignature, err.Error()}
		}
		return &apiError{e.Status(sigv4check.AWSJSON), e.Code(sigv4check.AWSJSON), e.Message}
	}
	return nil
}
