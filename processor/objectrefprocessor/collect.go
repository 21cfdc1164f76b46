// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// Collecting and resolving a record's references (design.md sections 1 and 2).

// bodyMap returns the map of the body where references are looked for, if there is one.
func (p *refProcessor) bodyMap(body pcommon.Value) (pcommon.Map, bool) {
	if body.Type() != pcommon.ValueTypeMap {
		return pcommon.Map{}, false
	}
	if p.bodyField == "" {
		return body.Map(), true
	}
	inner, ok := body.Map().Get(p.bodyField)
	if !ok || inner.Type() != pcommon.ValueTypeMap {
		return pcommon.Map{}, false
	}
	return inner.Map(), true
}

// collect appends the matches among m's keys, notes the sibling values they may read and the
// outputs the record already carries. One filtered lookup per key answers all three.
func (p *refProcessor) collect(m pcommon.Map, inBody bool, w *work) {
	t := p.table
	roles := &t.attrRoles
	if inBody {
		roles = &t.bodyRoles
	}
	for k, v := range m.All() {
		i, ok := roles.get(k)
		if !ok {
			continue
		}
		r := &t.roles[i]
		if r.sibling >= 0 {
			w.noteSibling(r.sibling, inBody, v)
		}
		if r.key >= 0 {
			w.matches = append(w.matches, match{idx: r.key, inBody: inBody, val: v})
		} else if r.output != outNone && !inBody {
			w.existing[r.output] = true
		}
	}
}

// noteSibling keeps the first value a record gives a sibling key (as pcommon.Map.Get would
// find it); only a string value counts.
func (w *work) noteSibling(slot int, inBody bool, v pcommon.Value) {
	for i := range w.siblings {
		if w.siblings[i].slot == slot && w.siblings[i].inBody == inBody {
			return
		}
	}
	s := sibling{slot: slot, inBody: inBody}
	if v.Type() == pcommon.ValueTypeStr {
		s.value, s.ok = v.Str(), true
	}
	w.siblings = append(w.siblings, s)
}

// sibling returns the string value of a sibling slot beside a match (-1: not configured).
func (w *work) sibling(slot int, inBody bool) (string, bool) {
	if slot < 0 {
		return "", false
	}
	for i := range w.siblings {
		if s := &w.siblings[i]; s.slot == slot && s.inBody == inBody {
			return s.value, s.ok
		}
	}
	return "", false
}

// sortMatches orders matches by key-table position, attributes before body; an insertion sort,
// as a record has few.
func sortMatches(ms []match) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && less(&ms[j], &ms[j-1]); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

func less(a, b *match) bool {
	if a.idx != b.idx {
		return a.idx < b.idx
	}
	return !a.inBody && b.inBody
}

// resolve parses a match's value (one reference, or a list's) and checks each against its kind.
func (p *refProcessor) resolve(m *match, w *work, c *counts) {
	key := &p.table.keys[m.idx]
	ctx := p.context(key, m.inBody, w)
	m.first = len(w.refs)
	defer func() { m.last = len(w.refs) }()
	if !key.list {
		if why := p.resolveOne(m.val, ctx, w); why != objref.OK {
			c.rejected[why]++
			m.rejected = true
		}
		return
	}
	switch m.val.Type() {
	case pcommon.ValueTypeStr: // klog text writes a KObjSlice as ["ns/a","ns/b"]
		items, ok := objref.ParseList(m.val.Str())
		if !ok {
			c.rejected[objref.Malformed]++
			m.rejected = true
			return
		}
		for _, s := range items {
			sp, why := objref.ParseText(s)
			if why = p.resolveSpelling(sp, why, ctx, w); why != objref.OK {
				c.rejected[why]++
				m.rejected = true
			}
		}
	case pcommon.ValueTypeSlice: // klog JSON writes it as a list of maps
		s := m.val.Slice()
		for i := 0; i < s.Len(); i++ {
			if s.At(i).Type() == pcommon.ValueTypeEmpty {
				continue // a nil element
			}
			if why := p.resolveOne(s.At(i), ctx, w); why != objref.OK {
				c.rejected[why]++
				m.rejected = true
			}
		}
	default:
		c.rejected[objref.Malformed]++
		m.rejected = true
	}
}

// context gathers what the record says next to a reference: its key's kind or the sibling
// kind, the sibling namespace and uid.
func (p *refProcessor) context(key *keyInfo, inBody bool, w *work) objref.Context {
	sib := &key.sibSlots
	ctx := objref.Context{Kind: key.kind}
	if ctx.Kind == "" && sib.kind >= 0 {
		ctx.Kind, _ = w.sibling(sib.kind, inBody)
	}
	ctx.Namespace, ctx.HasNamespace = w.sibling(sib.namespace, inBody)
	ctx.UID, _ = w.sibling(sib.uid, inBody)
	return ctx
}

// resolveOne parses one value (text or map) and resolves it, appending it to w.refs if accepted.
func (p *refProcessor) resolveOne(v pcommon.Value, ctx objref.Context, w *work) objref.Reason {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		sp, why := objref.ParseText(v.Str())
		return p.resolveSpelling(sp, why, ctx, w)
	case pcommon.ValueTypeMap:
		var f objref.Fields
		for k, fv := range v.Map().All() {
			if fv.Type() == pcommon.ValueTypeStr {
				f.Add(k, fv.Str())
			} else {
				f.AddOther(k)
			}
		}
		sp, why := f.Spelling()
		return p.resolveSpelling(sp, why, ctx, w)
	default:
		return objref.Malformed
	}
}

// resolveSpelling resolves a parsed spelling in a record's context, appending it to w.refs if
// accepted.
func (p *refProcessor) resolveSpelling(sp objref.Spelling, why objref.Reason, ctx objref.Context, w *work) objref.Reason {
	if why != objref.OK {
		return why
	}
	ref, port, why := p.table.kinds.Resolve(sp, ctx)
	if why != objref.OK {
		return why
	}
	spelled := sp.Ref
	spelled.Name = ref.Name
	if port != "" {
		spelled.Name += ":" + port
	}
	nsBy := spelled.Namespace == "" && ref.Namespace != ""
	spelled.Namespace = ref.Namespace
	spelled.UID = ref.UID
	w.refs = append(w.refs, resolved{ref: ref, port: port, spelled: spelled, namespaceBy: nsBy})
	return objref.OK
}
