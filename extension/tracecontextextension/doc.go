// SPDX-License-Identifier: Apache-2.0

// Package tracecontextextension provides the trace_context extension: it keeps, from metadata-only
// watches, the span contexts Kubernetes objects carry in their trace.kubernetes.io/context or
// tracing.k8s.io/traceparent annotations, and answers lookups by uid or by kind, namespace and
// name, following owner references to the nearest ancestor with a context.
//
//go:generate go run ../../internal/mdgen .
package tracecontextextension
