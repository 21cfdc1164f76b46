// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"context"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// The record's objects: subject and others (design.md section 4).

// writeObjects writes the record's subject (the first reference of a subject key, in key-table
// order), an event's related object, and the keys of every other object the record names.
// Outputs the record already carries are kept; a different subject there counts a conflict.
func (p *refProcessor) writeObjects(ctx context.Context, lr plog.LogRecord, attrs pcommon.Map, w *work, c *counts) {
	subject, related := -1, -1
	for i := range w.matches {
		m := &w.matches[i]
		if m.first == m.last || w.refs[m.first].ref.Kind == "" {
			continue // no reference, or one whose kind nothing states
		}
		key := &p.table.keys[m.idx]
		switch {
		case key.related && related < 0:
			related = m.first
		case key.subject && !key.list && subject < 0 && !m.rejected:
			subject = m.first
		}
	}
	w.keys = w.keys[:0]
	for i := range w.refs {
		r := &w.refs[i].ref
		if i == subject || i == related || r.Kind == "" {
			continue
		}
		if subject >= 0 && r.Kind == "Namespace" && r.Group() == "" && r.Name == w.refs[subject].ref.Namespace {
			continue // the namespace the subject is in
		}
		if subject >= 0 && sameObject(r, &w.refs[subject].ref) {
			continue
		}
		k := r.Key()
		if !slices.Contains(w.keys, k) {
			w.keys = append(w.keys, k)
		}
	}
	var subj objref.Ref
	if subject >= 0 {
		subj = w.refs[subject].ref
		for i := range w.refs {
			if i != subject {
				mergeDetails(&subj, &w.refs[i].ref)
			}
		}
	}
	// Room for every attribute written below at once: growing the map for each object
	// copied it up to three times per record.
	need := 0
	if subject >= 0 && !w.existing[outSubject] {
		need += objref.PutCount(attr.Subject, subj)
	}
	if related >= 0 && !w.existing[outRelated] {
		need += objref.PutCount(attr.Related, w.refs[related].ref)
	}
	if len(w.keys) > 0 && !w.existing[outRefs] {
		need++
	}
	if need > 0 {
		attrs.EnsureCapacity(attrs.Len() + need)
	}
	if subject >= 0 {
		p.putObject(attrs, attr.Subject, outSubject, &subj, w, c)
	}
	if related >= 0 {
		p.putObject(attrs, attr.Related, outRelated, &w.refs[related].ref, w, c)
	}

	if len(w.keys) > 0 && !w.existing[outRefs] {
		s := attrs.PutEmptySlice(attr.ObjectRefs)
		s.EnsureCapacity(len(w.keys))
		for _, k := range w.keys {
			s.AppendEmpty().SetStr(k)
		}
	}

	if w.correlate && lr.TraceID().IsEmpty() {
		p.correlate(ctx, lr, w, subject, c)
	}
}

// mergeDetails fills in the fields of ref that another reference to the same object states:
// a log line may name its subject twice, once with a uid.
func mergeDetails(ref, other *objref.Ref) {
	if !sameObject(ref, other) {
		return
	}
	if ref.UID == "" {
		ref.UID = other.UID
	}
	if ref.FieldPath == "" {
		ref.FieldPath = other.FieldPath
	}
	if ref.ResourceVersion == "" {
		ref.ResourceVersion = other.ResourceVersion
	}
}

// sameObject reports whether two references name one object.
func sameObject(a, b *objref.Ref) bool {
	return a.Kind == b.Kind && a.Group() == b.Group() && a.Namespace == b.Namespace && a.Name == b.Name
}

// putObject writes ref under set unless the record carries that output already; a different
// object there is counted as a conflict and kept.
func (p *refProcessor) putObject(attrs pcommon.Map, set attr.ObjectSet, out output, ref *objref.Ref, w *work, c *counts) {
	if w.existing[out] {
		if !has(attrs, set.Name, ref.Name) || !has(attrs, set.Kind, ref.Kind) || !has(attrs, set.Namespace, ref.Namespace) {
			c.conflicts++
		}
		return
	}
	objref.Put(attrs, set, *ref)
}

// has reports whether attrs holds key with value, or neither when value is empty.
func has(attrs pcommon.Map, key, value string) bool {
	v, ok := attrs.Get(key)
	if !ok {
		return value == ""
	}
	return v.Type() == pcommon.ValueTypeStr && v.Str() == value
}
