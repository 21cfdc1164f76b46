// SPDX-License-Identifier: Apache-2.0

// Package sigv4check verifies AWS Signature Version 4 Authorization headers the way AWS
// services do, against a known map of access keys to secrets, for the project's local AWS
// servers (testbed/localcloudwatch, testbed/localxray). It answers each refusal with the
// code and HTTP status of the service's protocol (Error.Code, Error.Status).
//
// The rules it follows are numbered in design.md. It uses only the standard library, and lives
// beside the signer (internal/awsauth) so that the signing components' tests verify with it
// without a test-only module in their go.mod; it is compiled only into tests and test servers.
package sigv4check
