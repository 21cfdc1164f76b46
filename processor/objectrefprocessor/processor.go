// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/namefilter"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/tracesource"
	"github.com/otelcol-k8s/otelcol-k8s/processor/objectrefprocessor/internal/metadata"
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
