// SPDX-License-Identifier: Apache-2.0

package objectref

import (
	"context"
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/namefilter"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/tracesource"
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

// conflictAttribute is the reason of a subject not written because the record has another.
const conflictAttribute = "attribute"

// refProcessor normalizes object references in the log records of Kubernetes components.
type refProcessor struct {
	table     *table
	form      Form
	body      bool
	bodyField string
	match     MatchConfig
	traceID   *component.ID
	ownPod    bool
	source    TraceContextSource
	held      tracesource.Held   // source's, when it has the method
	names     *namefilter.Filter // source's TraceContextNames, when it has the method
	tel       *metadata.TelemetryBuilder

	rejectedOpts     [objref.NumReasons]metric.AddOption
	conflictAttrsOpt metric.AddOption
}

func newRefProcessor(cfg *Config, tel *metadata.TelemetryBuilder) (*refProcessor, error) {
	t, err := buildTable(cfg)
	if err != nil {
		return nil, err
	}
	p := &refProcessor{
		table: t, form: cfg.form(), body: cfg.Body, bodyField: cfg.BodyField, match: cfg.Match,
		traceID: cfg.TraceContext, ownPod: cfg.OwnPod, tel: tel,
	}
	for _, r := range objref.Reasons() {
		p.rejectedOpts[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", r.String())))
	}
	p.conflictAttrsOpt = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", conflictAttribute)))
	return p, nil
}

func (p *refProcessor) start(_ context.Context, host component.Host) error {
	if p.traceID == nil {
		return nil
	}
	src, err := tracesource.Find(host, *p.traceID, "trace_context")
	if err != nil {
		return err
	}
	p.source = src
	p.held, _ = src.(tracesource.Held)
	if n, ok := src.(tracesource.Names); ok {
		p.names = n.TraceContextNames()
	}
	return nil
}

func (p *refProcessor) shutdown(context.Context) error {
	p.tel.Shutdown()
	return nil
}

// counts accumulates one batch's telemetry, recorded once per batch.
type counts struct {
	records, ignored, normalized, correlated int64
	rejected                                 [objref.NumReasons]int64
	conflicts                                int64
}

func (p *refProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	var c counts
	w := work{correlate: p.source != nil && (p.held == nil || p.held.TraceContextsHeld())}
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		all := p.match.All || p.resourceMatches(rl.Resource().Attributes())
		var pod trace.SpanContext
		if w.correlate && p.ownPod {
			pod = p.podContext(ctx, rl.Resource().Attributes())
		}
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				c.records++
				if all || p.recordMatches(lr.Attributes()) {
					p.processRecord(ctx, lr, &w, &c)
				} else {
					c.ignored++
				}
				if pod.IsValid() && lr.TraceID().IsEmpty() {
					setContext(lr, pod)
					c.correlated++
				}
			}
		}
	}
	p.record(ctx, &c)
	return ld, nil
}

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

func (p *refProcessor) record(ctx context.Context, c *counts) {
	p.tel.ProcessorObjectRefRecordsProcessed.Add(ctx, c.records)
	if c.ignored > 0 {
		p.tel.ProcessorObjectRefRecordsIgnored.Add(ctx, c.ignored)
	}
	if c.normalized > 0 {
		p.tel.ProcessorObjectRefReferencesNormalized.Add(ctx, c.normalized)
	}
	for r, n := range c.rejected {
		if n > 0 {
			p.tel.ProcessorObjectRefReferencesRejected.Add(ctx, n, p.rejectedOpts[r])
		}
	}
	if c.conflicts > 0 {
		p.tel.ProcessorObjectRefSubjectConflicts.Add(ctx, c.conflicts, p.conflictAttrsOpt)
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

	// refs[first:last] in the work's refs are the references the value holds (one, or a list's).
	first, last int
	// rejected is true when any of them was rejected: the value is then left as it was.
	rejected bool
}

// resolved is one accepted reference of a record.
type resolved struct {
	ref  objref.Ref
	port string
	// spelled is what the record stated, namespace completed: the map form writes it.
	spelled objref.Ref
	// namespaceBy is true when the namespace came from a sibling key.
	namespaceBy bool
}

// work is scratch space reused across the records of a batch.
type work struct {
	matches []match
	refs    []resolved
	keys    []string
	// siblings are the sibling values of the record, noted while collecting.
	siblings []sibling
	// existing are the outputs the record carries already.
	existing [outRefs + 1]bool
	// correlate is whether the batch's records are looked up in the trace context source.
	correlate bool
}

// sibling is the first value a record gives one sibling slot, in its attributes or body.
type sibling struct {
	slot   int
	inBody bool
	value  string
	ok     bool // the value is a string
}

func (p *refProcessor) processRecord(ctx context.Context, lr plog.LogRecord, w *work, c *counts) {
	attrs := lr.Attributes()
	w.matches = w.matches[:0]
	w.refs = w.refs[:0]
	w.siblings = w.siblings[:0]
	w.existing = [outRefs + 1]bool{}
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
		p.resolve(&w.matches[i], w, c)
	}
	for i := range w.matches {
		m := &w.matches[i]
		if m.rejected || m.first == m.last {
			continue
		}
		c.normalized += int64(m.last - m.first)
		p.rewrite(m, w.refs[m.first:m.last])
	}
	p.writeObjects(ctx, lr, attrs, w, c)
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

// correlate gives the record the trace context of the first object it names that has one: the
// subject first, then the others in key-table order.
func (p *refProcessor) correlate(ctx context.Context, lr plog.LogRecord, w *work, subject int, c *counts) {
	try := func(r *objref.Ref) bool {
		if p.names != nil && r.UID == "" && !p.names.MayContain(r.Kind, r.Name) {
			return false // the source holds nothing of that name
		}
		sc, ok := p.source.SpanContextForObject(ctx, r.APIVersion, r.Kind, r.Namespace, r.Name, r.UID)
		if !ok || !sc.HasTraceID() || !sc.HasSpanID() {
			return false
		}
		setContext(lr, sc)
		c.correlated++
		return true
	}
	if subject >= 0 && try(&w.refs[subject].ref) {
		return
	}
	for i := range w.refs {
		if i != subject && w.refs[i].ref.Kind != "" && try(&w.refs[i].ref) {
			return
		}
	}
}

// setContext gives the record the trace and span ids and the sampled flag of sc.
func setContext(lr plog.LogRecord, sc trace.SpanContext) {
	lr.SetTraceID(pcommon.TraceID(sc.TraceID()))
	lr.SetSpanID(pcommon.SpanID(sc.SpanID()))
	lr.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(sc.IsSampled()))
}

// podContext returns the trace context of the Pod a resource names (own_pod): by its uid, else
// by its namespace and name; invalid when it has none.
func (p *refProcessor) podContext(ctx context.Context, res pcommon.Map) trace.SpanContext {
	str := func(key string) string {
		if v, ok := res.Get(key); ok && v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
		return ""
	}
	uid, ns, name := str(attr.K8sPodUID), str(attr.K8sNamespaceName), str(attr.K8sPodName)
	if uid == "" && (ns == "" || name == "") {
		return trace.SpanContext{}
	}
	if uid == "" && p.names != nil && !p.names.MayContain("Pod", name) {
		return trace.SpanContext{}
	}
	sc, ok := p.source.SpanContextForObject(ctx, "v1", "Pod", ns, name, uid)
	if !ok || !sc.HasTraceID() || !sc.HasSpanID() {
		return trace.SpanContext{}
	}
	return sc
}
