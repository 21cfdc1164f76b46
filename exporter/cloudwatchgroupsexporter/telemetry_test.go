// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// dataPoints returns the values of an int sum metric.
func dataPoints(m metricdata.Metrics) []int64 {
	sum, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		return nil
	}
	out := make([]int64, 0, len(sum.DataPoints))
	for _, dp := range sum.DataPoints {
		out = append(out, dp.Value)
	}
	return out
}

// sumOf adds up the values of an int sum metric.
func sumOf(m metricdata.Metrics) int64 {
	var n int64
	for _, v := range dataPoints(m) {
		n += v
	}
	return n
}
