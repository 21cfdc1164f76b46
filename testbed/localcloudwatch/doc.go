// SPDX-License-Identifier: Apache-2.0

// Package localcloudwatch is a local CloudWatch Logs server for tests, benchmarks and
// `make run`.
//
// It speaks the awsJson1_1 protocol exactly as the aws-sdk-go-v2 cloudwatchlogs client
// sends it (POST /, X-Amz-Target: Logs_20140328.<Operation>), accepts any SigV4-signed
// request without verifying the signature, enforces the documented CloudWatch Logs
// limits (names, batch bytes and counts, event size, chronological order, 24 h span,
// the 14 day / 2 hour time window reported through rejectedLogEventsInfo, retention
// values, request-rate quotas) and injects faults (throttling, 5xx, latency, dropped
// connections, a full outage) deterministically from a seed.
//
// Start one in a test with:
//
//	srv := localcloudwatch.New(localcloudwatch.Config{})
//	endpoint, err := srv.Start("127.0.0.1:0")
//	defer srv.Close()
//
// and point the SDK client's BaseEndpoint at endpoint. The inspection helpers (Groups,
// Streams, Events, Stats) read the stored state without going through the API.
package localcloudwatch
