// SPDX-License-Identifier: Apache-2.0

// Package nodesim simulates the container log files of one Kubernetes node, written the way
// kubelet and containerd write them, so the collector can be tested end to end without a cluster.
//
// Files follow the kubelet layout /var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log
// under a root directory. Each line is a CRI log entry ("<RFC3339Nano> <stream> <P|F> <content>"):
// content longer than the containerd line limit (16 KiB) is split into partial pieces tagged P,
// and a container's stderr lines can land between the pieces of a long stdout line, as happens
// when both pipes are copied into one file. Content comes from the real loggers: klog text lines
// from k8s.io/klog/v2's textlogger, klog JSON lines from k8s.io/component-base's JSON logger, plus
// plain application lines, long lines and, on request, malformed lines.
//
// Files rotate like kubelet's container log manager: once a file exceeds RotateBytes it is
// renamed to <restart>.log.<YYYYMMDD-hhmmss>, and rotated files older than the newest are
// gzip-compressed (through a .tmp file, at the next rotation: the newest rotation stays plain),
// and only KeepFiles files (the current one included) are kept. The runtime keeps writing to
// the renamed file through its descriptor until it reopens, ReopenDelay after the rename
// (kubelet's ReopenContainerLog call); only then does the new <restart>.log exist.
// Pods are created and deleted during a run, including pods that live one second; a deleted
// pod's log directory is removed PodDeleteDelay after its containers stop.
//
// Every line carries a unique token nodesim:<container id>:<sequence> (see Token), the sequence
// counting from 1 per container in the order the lines' first bytes are written. The Ledger
// records how many lines each container wrote, so a test can account for every line.
package nodesim
