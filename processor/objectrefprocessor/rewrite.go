// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// Rewriting references in the configured form (design.md section 3).

// text returns the string form of an accepted reference: namespace/name, name, or for a
// kube-proxy service port namespace/name:port.
func (r *resolved) text() string {
	if r.port == "" {
		return r.ref.String()
	}
	return r.ref.String() + ":" + r.port
}

// isText reports whether s is already r's string form, without building it.
func (r *resolved) isText(s string) bool {
	if r.port == "" {
		return r.ref.IsCanonical(s)
	}
	return s == r.text()
}

// rewrite writes a match's accepted references in the configured form. Every key gets one
// type: a string (or map) for a single reference, a list of them for a list key.
func (p *refProcessor) rewrite(m *match, refs []resolved) {
	if !p.table.keys[m.idx].list {
		p.rewriteOne(m.val, &refs[0])
		return
	}
	if m.val.Type() == pcommon.ValueTypeSlice {
		s := m.val.Slice()
		if s.Len() == len(refs) {
			for i := range refs {
				p.rewriteOne(s.At(i), &refs[i])
			}
			return
		}
	}
	s := m.val.SetEmptySlice()
	s.EnsureCapacity(len(refs))
	for i := range refs {
		v := s.AppendEmpty()
		if p.form == FormString {
			v.SetStr(refs[i].text())
		} else {
			putRefMap(v.SetEmptyMap(), &refs[i].spelled)
		}
	}
}

// rewriteOne writes one accepted reference in the configured form; a value already in the form
// is not touched.
func (p *refProcessor) rewriteOne(v pcommon.Value, r *resolved) {
	isMap := v.Type() == pcommon.ValueTypeMap
	if p.form == FormString {
		if isMap || !r.isText(v.Str()) {
			v.SetStr(r.text())
		}
		return
	}
	if !isMap {
		putRefMap(v.SetEmptyMap(), &r.spelled)
		return
	}
	mm := v.Map()
	if r.spelled.Namespace == "" {
		mm.Remove(fieldNamespace) // an explicit empty namespace: the canonical map omits it
	} else if r.namespaceBy {
		mm.PutStr(fieldNamespace, r.spelled.Namespace)
	}
	if r.spelled.UID != "" {
		if _, ok := mm.Get(fieldUID); !ok {
			mm.PutStr(fieldUID, r.spelled.UID)
		}
	}
}

// putRefMap writes the canonical map form of ref into an empty map.
func putRefMap(mm pcommon.Map, ref *objref.Ref) {
	mm.EnsureCapacity(7)
	if ref.Kind != "" {
		mm.PutStr(fieldKind, ref.Kind)
	}
	if ref.APIVersion != "" {
		mm.PutStr(fieldAPIVersion, ref.APIVersion)
	}
	if ref.Namespace != "" {
		mm.PutStr(fieldNamespace, ref.Namespace)
	}
	mm.PutStr(fieldName, ref.Name)
	if ref.UID != "" {
		mm.PutStr(fieldUID, ref.UID)
	}
	if ref.ResourceVersion != "" {
		mm.PutStr(fieldResourceVersion, ref.ResourceVersion)
	}
	if ref.FieldPath != "" {
		mm.PutStr(fieldFieldPath, ref.FieldPath)
	}
}
