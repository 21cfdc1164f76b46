// SPDX-License-Identifier: Apache-2.0

// Package kubeclient builds the Kubernetes client configuration every component of this
// repository uses (kubeconfig or in-cluster, client-side rate limit, user agent) and runs work
// only while this process holds a coordination.k8s.io/v1 Lease.
package kubeclient
