// SPDX-License-Identifier: Apache-2.0

// Package objspans is what kube_lifecycle and kube_events agree on about the spans they make
// for Kubernetes objects: the ids of an object's trace when it carries no context, and which
// of those traces are sampled. Both receivers import it so that the spans of one object and
// one desired state land in one trace and are kept or dropped together (design.md).
package objspans
