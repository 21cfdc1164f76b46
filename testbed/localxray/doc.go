// SPDX-License-Identifier: Apache-2.0

// Package localxray is a local stand-in for the X-Ray OTLP endpoint
// (https://xray.<region>.amazonaws.com/v1/traces): OTLP/HTTP traces, protobuf or JSON, gzip
// or plain, SigV4-verified for the signing name "xray" through internal/awsauth/sigv4check, within the
// endpoint's documented limits, stored for tests to read.
package localxray
