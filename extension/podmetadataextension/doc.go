// SPDX-License-Identifier: Apache-2.0

// Package podmetadataextension provides the pod_metadata extension: the node's one source of
// Pod metadata. It holds one metadata-only watch of the Pods scheduled to its node, looks up
// their owners (ReplicaSet to Deployment, Job to CronJob) and namespaces on demand, in bounded
// caches, and serves the contract of internal/k8smodel/podmeta to the components of the process.
//
//go:generate go run ../../internal/mdgen .
package podmetadataextension
