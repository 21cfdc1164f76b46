// SPDX-License-Identifier: Apache-2.0

// Package kubelifecyclereceiver provides the kube_lifecycle receiver: it turns what the cluster
// already records about a Pod (creation, condition transition times, container starts) into a
// lifecycle trace, under the Pod's own trace context when it carries one, without
// instrumenting any Kubernetes component.
//
//go:generate go run ../../internal/mdgen .
package kubelifecyclereceiver
