// SPDX-License-Identifier: Apache-2.0

// Package awssigv4authextension provides the aws_sigv4_auth extension: an HTTP client
// authenticator that signs every request with AWS Signature Version 4, with credentials from
// the same chain as the cloudwatch_groups exporter (internal/awsauth). Exporters use it with
// `auth: {authenticator: aws_sigv4_auth}`, for example otlp_http to the X-Ray OTLP endpoint.
//
//go:generate go run ../../internal/mdgen .
package awssigv4authextension
