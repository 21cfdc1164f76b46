// SPDX-License-Identifier: Apache-2.0

// Package objecttrace carries OpenTelemetry span contexts on Kubernetes objects, as annotations,
// so that the work of many controllers on one object reads as one trace.
//
// Two annotation schemes are in use, and both are read and written:
//
//   - ContextAnnotation (trace.kubernetes.io/context), from the object-lifecycle tracing
//     proposal: one value holding either a W3C traceparent or the base64 binary span context
//     written by the original mutating admission webhook (29 bytes, 40 base64 characters).
//     Work on the object continues the trace: its spans are children of the stored context.
//   - TraceparentAnnotation and TracestateAnnotation (tracing.k8s.io/traceparent and
//     tracing.k8s.io/tracestate), from the asynchronous propagation proposal: W3C values that a
//     later actor links to rather than parents under.
//
// Whether a span parents under or links to the stored context is the caller's choice (Mode).
// AnnotationCarrier lets any OpenTelemetry TextMapPropagator read and write the
// tracing.k8s.io/ annotations of an object.
//
// The package depends on the OpenTelemetry API only: objects are anything with
// GetAnnotations and SetAnnotations, which every Kubernetes API object (metav1.Object) has. It
// has no InitializeExporter: a program sets up the OpenTelemetry SDK and its OTLP exporter
// itself, pointed at the node agent's OTLP receiver (README, "Sending spans to the collector").
package objecttrace
