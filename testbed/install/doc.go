// SPDX-License-Identifier: Apache-2.0

// Package install renders the Helm chart of deploy/helm/otelcol-k8s with Helm's own Go library
// and writes or checks the plain manifests of deploy/kubernetes, which are the chart's rendering
// with the values of deploy/kubernetes/chart-values.yaml (and deploy/kubernetes/traces, the same
// with tracing on). Its tests prove the rendered objects
// against a real kube-apiserver (server-side dry run, RBAC by SubjectAccessReview) and the
// rendered collector configurations against the built binary.
package install
