// SPDX-License-Identifier: Apache-2.0

// Package klogparser benchmarks the klog_parser processor side by side with contrib's
// transform processor doing the same job with OTTL (ExtractPatterns on the klog header,
// ParseKeyValue on the pairs, ParseJSON for the JSON format) on the same corpus.
package klogparser
