// SPDX-License-Identifier: Apache-2.0

// Package journalreceiver provides the journal receiver: it reads the systemd journal files of
// a node (the kubelet's, containerd's and the kernel's logs) directly, in pure Go, without
// journalctl or libsystemd, and checkpoints its position by cursor in a storage extension.
//
//go:generate go run ../../internal/mdgen .
package journalreceiver
