// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import "github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/tracesource"

// TraceContextSource is what the processor needs from the extension named by trace_context
// (internal/k8smodel/tracesource, shared with kube_events and kube_lifecycle). The processor
// calls it once per subject of a record, on the pipeline's goroutine; its optional methods
// TraceContextsHeld (asked once per batch) and TraceContextNames (tested before each look-up of
// an object named without a uid) spare the calls in a cluster where few objects carry a context.
type TraceContextSource = tracesource.Source
