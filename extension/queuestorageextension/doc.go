// SPDX-License-Identifier: Apache-2.0

// Package queuestorageextension provides the queue_storage extension: a storage extension for
// exporterhelper's persistent queue that keeps each client's keys and values in an append-only
// log of segment files, so that each queued value is written to disk once, and removes whole
// segments once the queue has moved past them. How: design.md.
//
//go:generate go run ../../internal/mdgen .
package queuestorageextension
