// SPDX-License-Identifier: Apache-2.0

// Package objectrefprocessor provides the object_ref processor: it finds Kubernetes object references in
// log records however they are spelled (klog text and JSON, namespace/name strings, separate
// name and namespace keys, event regarding/related maps), rewrites them to one form and names the
// objects a record is about under the project's own otelcol_k8s.object.* attributes. It never
// writes a k8s.* attribute: those name the Pod that wrote the line.
//
//go:generate go run ../../internal/mdgen .
package objectrefprocessor
