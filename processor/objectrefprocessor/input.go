// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// Declared input (design.md section 0): which records the processor acts on.

// resourceMatches reports whether every record of a resource is declared input: it comes from a
// configured namespace or container.
func (p *refProcessor) resourceMatches(res pcommon.Map) bool {
	return listed(res, attr.K8sNamespaceName, p.match.Namespaces) || listed(res, attr.K8sContainerName, p.match.Containers)
}

func listed(m pcommon.Map, key string, values []string) bool {
	if len(values) == 0 {
		return false
	}
	v, ok := m.Get(key)
	return ok && v.Type() == pcommon.ValueTypeStr && slices.Contains(values, v.Str())
}

// recordMatches reports whether klog_parser recognized the record as klog.
func (p *refProcessor) recordMatches(attrs pcommon.Map) bool {
	if !p.match.Klog {
		return false
	}
	_, ok := attrs.Get(attr.KlogFormat)
	return ok
}
