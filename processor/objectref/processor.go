package objectref

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-k8s/otelcol-k8s/processor/objectref/internal/k8sref"
	"github.com/otelcol-k8s/otelcol-k8s/processor/objectref/internal/metadata"
)

// Map field names of the canonical map form (ObjectReference's JSON names).
const (
	fieldNamespace       = "namespace"
	fieldName            = "name"
	fieldUID             = "uid"
	fieldKind            = "kind"
	fieldAPIVersion      = "apiVersion"
	fieldResourceVersion = "resourceVersion"
	fieldFieldPath       = "fieldPath"
)

// Reasons a subject attribute is not written.
const (
	conflictNamespace = "namespace"
	conflictAttribute = "attribute"
)

// refProcessor normalizes object references in log records.
type refProcessor struct {
	table     *table
	form      Form
	body      bool
	bodyField string
	traceID   *component.ID
	source    TraceContextSource
	tel       *metadata.TelemetryBuilder

	rejectedOpts     [k8sref.NumReasons]metric.AddOption
	conflictNSOpt    metric.AddOption
	conflictAttrsOpt metric.AddOption
}

func newRefProcessor(cfg *Config, tel *metadata.TelemetryBuilder) (*refProcessor, error) {
	t, err := buildTable(cfg)
	if err != nil {
		return nil, err
	}
	p := &refProcessor{
		table: t, form: cfg.form(), body: cfg.Body, bodyField: cfg.BodyField,
		traceID: cfg.TraceContext, tel: tel,
	}
	for _, r := range k8sref.Reasons() {
		p.rejectedOpts[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", r.String())))
	}
	p.conflictNSOpt = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", conflictNamespace)))
	p.conflictAttrsOpt = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", conflictAttribute)))
	return p, nil
}

func (p *refProcessor) start(_ context.Context, host component.Host) error {
	if p.traceID == nil {
		return nil
	}
	src, err := findTraceContextSource(host, *p.traceID)
	if err != nil {
		return err
	}
	p.source = src
	return nil
}

func (p *refProcessor) shutdown(context.Context) error {
	p.tel.Shutdown()
	return nil
}

// counts accumulates one batch's telemetry, recorded once per batch.
type counts struct {
	records, normalized, correlated int64
	rejected                        [k8sref.NumReasons]int64
	conflictNS, conflictAttrs       int64
}

func (p *refProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	var c counts
	var w work
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				p.processRecord(ctx, lrs.At(k), &w, &c)
			}
		}
	}
	p.record(ctx, &c)
	return ld, nil
}

func (p *refProcessor) record(ctx context.Context, c *counts) {
	p.tel.ProcessorObjectRefRecordsProcessed.Add(ctx, c.records)
	if c.normalized > 0 {
		p.tel.ProcessorObjectRefReferencesNormalized.Add(ctx, c.normalized)
	}
	for r, n := range c.rejected {
		if n > 0 {
			p.tel.ProcessorObjectRefReferencesRejected.Add(ctx, n, p.rejectedOpts[r])
		}
	}
	if c.conflictNS > 0 {
		p.tel.ProcessorObjectRefSubjectConflicts.Add(ctx, c.conflictNS, p.conflictNSOpt)
	}
	if c.conflictAttrs > 0 {
		p.tel.ProcessorObjectRefSubjectConflicts.Add(ctx, c.conflictAttrs, p.conflictAttrsOpt)
	}
	if c.correlated > 0 {
		p.tel.ProcessorObjectRefRecordsCorrelated.Add(ctx, c.correlated)
	}
}

// match is one attribute (or body key) whose key is in the key table.
type match struct {
	idx    int
	inBody bool
	val    pcommon.Value

	ref         k8sref.Ref
	why         k8sref.Reason
	kind        *kindInfo
	siblingUID  string
	namespaceBy bool // the namespace came from a sibling key
}

// work is scratch space reused across the records of a batch.
type work struct {
	matches  []match
	subjects []int
	writes   []keyValue
	// siblings are the sibling values of the record, noted while collecting.
	siblings []sibling
	// hasSubjectAttrs is true when the record's attributes hold a subject attribute already.
	hasSubjectAttrs bool
}

type keyValue struct{ key, value string }

// sibling is the first value a record gives one sibling slot, in its attributes or body.
type sibling struct {
	slot   int
	inBody bool
	value  string
	ok     bool // the value is a string
}

func (p *refProcessor) processRecord(ctx context.Context, lr plog.LogRecord, w *work, c *counts) {
	c.records++
	attrs := lr.Attributes()
	w.matches = w.matches[:0]
	w.hasSubjectAttrs = false
	w.siblings = w.siblings[:0]
	p.collect(attrs, false, w)
	if p.body {
		if body, ok := p.bodyMap(lr.Body()); ok {
			p.collect(body, true, w)
		}
	}
	if len(w.matches) == 0 {
		return
	}
	sortMatches(w.matches)

	// Resolve every reference before rewriting any: a rewrite may change a value another
	// reference reads as its sibling.
	for i := range w.matches {
		p.resolve(&w.matches[i], w)
	}
	for i := range w.matches {
		m := &w.matches[i]
		if m.why != k8sref.OK {
			c.rejected[m.why]++
			continue
		}
		c.normalized++
		p.rewrite(m)
	}
	p.writeSubjects(ctx, lr, attrs, w, c)
}

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

// collect appends the matches among m's keys, notes the sibling values they may read, and
// whether the attributes already hold a subject attribute (when none does, writing them needs
// no check). One filtered lookup per key answers all three.
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
		} else if r.subject && !inBody {
			w.hasSubjectAttrs = true
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

// resolve parses a match's value and checks it against its kind.
func (p *refProcessor) resolve(m *match, w *work) {
	key := &p.table.keys[m.idx]
	sib := &key.sibSlots
	ref := &m.ref
	var why k8sref.Reason
	switch m.val.Type() {
	case pcommon.ValueTypeStr:
		*ref, why = k8sref.ParseText(m.val.Str())
	case pcommon.ValueTypeMap:
		var f k8sref.Fields
		for k, v := range m.val.Map().All() {
			if v.Type() == pcommon.ValueTypeStr {
				f.Add(k, v.Str())
			} else {
				f.AddOther(k)
			}
		}
		*ref, why = f.Ref()
	default:
		why = k8sref.Malformed
	}
	if why != k8sref.OK {
		m.why = why
		return
	}

	kind := key.kind
	switch {
	case kind != nil:
		if ref.Kind != "" && ref.Kind != kind.kind {
			m.why = k8sref.KindMismatch
			return
		}
	case sib.kind >= 0:
		name, ok := w.sibling(sib.kind, m.inBody)
		if ok && ref.Kind != "" && ref.Kind != name {
			m.why = k8sref.KindMismatch
			return
		}
		if !ok {
			name = ref.Kind
		}
		kind = p.table.kinds[name]
	default:
		kind = p.table.kinds[ref.Kind]
	}
	scope := k8sref.ScopeUnknown
	if kind != nil {
		scope = kind.scope
	}

	var ns string
	var hasNS bool
	if ref.Bare && scope == k8sref.Namespaced && sib.namespace >= 0 {
		ns, hasNS = w.sibling(sib.namespace, m.inBody)
	}
	if why = k8sref.Resolve(ref, scope, ns, hasNS); why != k8sref.OK {
		m.why = why
		return
	}
	m.kind, m.namespaceBy = kind, hasNS
	if ref.UID == "" {
		if uid, ok := w.sibling(sib.uid, m.inBody); ok && k8sref.ValidUID(uid) {
			m.siblingUID = uid
		}
	}
}

// rewrite writes an accepted reference in the configured form.
func (p *refProcessor) rewrite(m *match) {
	ref := &m.ref
	isMap := m.val.Type() == pcommon.ValueTypeMap
	if p.form == FormString && !ref.Detailed {
		if isMap || !ref.IsCanonical(m.val.Str()) {
			m.val.SetStr(ref.String())
		}
		return
	}
	if !isMap {
		putRefMap(m.val.SetEmptyMap(), ref)
		return
	}
	mm := m.val.Map()
	if ref.Namespace == "" {
		mm.Remove(fieldNamespace) // an explicit empty namespace: the canonical map omits it
	} else if m.namespaceBy {
		mm.PutStr(fieldNamespace, ref.Namespace)
	}
}

// putRefMap writes the canonical map form of ref into an empty map.
func putRefMap(mm pcommon.Map, ref *k8sref.Ref) {
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

// writeSubjects picks the first eligible reference of each kind and writes its attributes.
func (p *refProcessor) writeSubjects(ctx context.Context, lr plog.LogRecord, attrs pcommon.Map, w *work, c *counts) {
	w.subjects = w.subjects[:0]
	for i := range w.matches {
		m := &w.matches[i]
		if m.why != k8sref.OK || m.kind == nil || !p.table.keys[m.idx].subject {
			continue
		}
		dup := false
		for _, j := range w.subjects {
			if w.matches[j].kind == m.kind {
				dup = true
				break
			}
		}
		if !dup {
			w.subjects = append(w.subjects, i)
		}
	}
	if len(w.subjects) == 0 {
		return
	}

	namespace, nsConflict := "", false
	for _, i := range w.subjects {
		m := &w.matches[i]
		ns := m.ref.Namespace
		if m.kind.isNamespace {
			ns = m.ref.Name
		}
		switch {
		case ns == "":
		case namespace == "":
			namespace = ns
		case namespace != ns:
			nsConflict = true
		}
	}

	w.writes = w.writes[:0]
	for _, i := range w.subjects {
		m := &w.matches[i]
		if !m.kind.isNamespace {
			p.plan(w, attrs, m.kind.nameAttribute, m.ref.Name, c)
		}
		uid := m.ref.UID
		if uid == "" {
			uid = m.siblingUID
		}
		if uid != "" && (!m.kind.isNamespace || !nsConflict) {
			p.plan(w, attrs, m.kind.uidAttribute, uid, c)
		}
	}
	if nsConflict {
		c.conflictNS++
	} else if namespace != "" {
		p.plan(w, attrs, namespaceNameAttribute, namespace, c)
	}
	if len(w.writes) > 0 {
		attrs.EnsureCapacity(attrs.Len() + len(w.writes))
		for _, kv := range w.writes {
			attrs.PutStr(kv.key, kv.value)
		}
	}

	if p.source != nil && lr.TraceID().IsEmpty() {
		p.correlate(ctx, lr, w, c)
	}
}

// plan queues a subject attribute unless the record already has it; a different value already
// there is kept and counted as a conflict.
func (p *refProcessor) plan(w *work, attrs pcommon.Map, key, value string, c *counts) {
	if key == "" {
		return
	}
	for _, kv := range w.writes {
		if kv.key == key { // two kinds configured with one attribute: the first wins
			if kv.value != value {
				c.conflictAttrs++
			}
			return
		}
	}
	if !w.hasSubjectAttrs {
		w.writes = append(w.writes, keyValue{key, value})
		return
	}
	if old, ok := attrs.Get(key); ok {
		if old.Type() != pcommon.ValueTypeStr || old.Str() != value {
			c.conflictAttrs++
		}
		return
	}
	w.writes = append(w.writes, keyValue{key, value})
}

// correlate gives the record the trace context of its first subject that has one.
func (p *refProcessor) correlate(ctx context.Context, lr plog.LogRecord, w *work, c *counts) {
	for _, i := range w.subjects {
		m := &w.matches[i]
		apiVersion := m.ref.APIVersion
		if apiVersion == "" {
			apiVersion = m.kind.apiVersion
		}
		uid := m.ref.UID
		if uid == "" {
			uid = m.siblingUID
		}
		sc, ok := p.source.SpanContextForObject(ctx, apiVersion, m.kind.kind, m.ref.Namespace, m.ref.Name, uid)
		if !ok || !sc.HasTraceID() || !sc.HasSpanID() {
			continue
		}
		lr.SetTraceID(pcommon.TraceID(sc.TraceID()))
		lr.SetSpanID(pcommon.SpanID(sc.SpanID()))
		lr.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(sc.IsSampled()))
		c.correlated++
		return
	}
}
