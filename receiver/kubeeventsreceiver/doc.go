// SPDX-License-Identifier: Apache-2.0

// Package kubeeventsreceiver provides the kube_events receiver: it watches Kubernetes Events
// (events.k8s.io/v1, core/v1 where that is all the API serves) with resource versions, infers
// the life of event series (start, ongoing, finished) from the recorders' writes, and emits one
// log record per Event and per series transition, exactly once across restarts, 410 Gone and
// leader changes.
//
//go:generate go run ../../internal/mdgen .
package kubeeventsreceiver
