// SPDX-License-Identifier: Apache-2.0

// Package objectref provides the object_ref processor: it finds Kubernetes object references in
// log records however they are spelled (klog text and JSON, namespace/name strings, separate
// name and namespace keys, event regarding/related maps), rewrites them to one form and names the
// record's subject with semantic-convention attributes such as k8s.pod.name.
//
//go:generate go run ../../internal/mdgen .
package objectref
