// SPDX-License-Identifier: Apache-2.0

//go:generate go run ../../internal/mdgen .

// Package klogparserprocessor provides the klog_parser processor: it parses Kubernetes component
// logs written by klog (text) or component-base (JSON) into structured log records.
package klogparserprocessor // import "github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor"
