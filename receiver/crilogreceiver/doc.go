// SPDX-License-Identifier: Apache-2.0

// Package crilogreceiver provides the cri_log receiver: it reads Kubernetes container log files
// (CRI and Docker json-file formats) without loss across rotation, truncation, deletion and
// collector restarts, joins partial lines per stream, and emits one ResourceLogs per container
// file per batch with the pod and container named by semantic-convention attributes.
//
//go:generate go run ../../internal/mdgen .
package crilogreceiver
