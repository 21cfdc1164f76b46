// SPDX-License-Identifier: Apache-2.0

// Package auditlogreceiver provides the audit_log receiver: it follows audit log files (the
// Linux audit daemon's, whose records it parses and joins into events by serial, or the
// Kubernetes API server's JSON lines), marks everything it reads as audit logs on the resource
// (the input decides the type, never the content) and checkpoints its offsets in a storage
// extension.
//
//go:generate go run ../../internal/mdgen .
package auditlogreceiver
