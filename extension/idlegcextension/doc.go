// SPDX-License-Identifier: Apache-2.0

// Package idlegcextension provides the idle_gc extension: while the collector allocates little
// (a node whose log files are quiet), it lowers the Go garbage collector's target (GOGC) and
// returns unused memory to the operating system, and it puts the collector's own target back
// as soon as work resumes. A quiet node then pays for its agent's live heap, not for twice it,
// and a busy one keeps the throughput of its normal target.
//
//go:generate go run ../../internal/mdgen .
package idlegcextension
