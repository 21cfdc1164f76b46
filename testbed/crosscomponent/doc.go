// SPDX-License-Identifier: Apache-2.0

// Package crosscomponent holds the tests and benchmarks that run two of the repository's
// components together: object_ref asking the trace_context extension, kube_events asking it.
// They live here because no component module requires another (CONTRIBUTING.md, "Layout";
// internal/repocheck's TestNoComponentRequiresAnother): a collector build importing one
// component must not resolve the others. Each component's own tests stand in for the other
// side with a small source of the same interface; these tests check the real pair.
package crosscomponent
