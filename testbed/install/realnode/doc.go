// SPDX-License-Identifier: Apache-2.0

// Package realnode proves the product as users install it on a real one-node cluster
// (testbed/kubenode): the image of `make image` imported into containerd, the chart of
// deploy/helm installed by Helm's Go library with only the endpoints, the API server's address
// and the node's network pointed at loopback, and scenarios with exact accounting of every line
// the workloads wrote against what the local CloudWatch Logs server stored.
//
// The tests need root, containerd and the node binaries; `make e2e-node` runs them
// (OTELCOL_K8S_E2E_NODE=1), otherwise they skip.
package realnode
