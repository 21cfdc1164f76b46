// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// putObjectRef writes an Event's regarding or related object through the shared object model,
// so it gets exactly the attributes object_ref writes for a log line's subject. A reference the
// model rejects is not written; the rejection reason is returned ("" when written).
func putObjectRef(m pcommon.Map, set attr.ObjectSet, r objref.Ref) string {
	if reason := objref.Canonicalize(&r); reason != objref.OK {
		return reason.String()
	}
	objref.Put(m, set, r)
	return ""
}
