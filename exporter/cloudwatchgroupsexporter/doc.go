// SPDX-License-Identifier: Apache-2.0

// Package cloudwatchgroupsexporter provides the cloudwatch_groups exporter: it writes logs to
// CloudWatch Logs, routing them to log groups by log type, namespace name or namespace UID
// and to one log stream per source log file, in full PutLogEvents batches.
package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

//go:generate go run ../../internal/mdgen .
