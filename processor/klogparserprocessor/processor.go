// SPDX-License-Identifier: Apache-2.0

package klogparserprocessor // import "github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor"

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor/internal/klogline"
	"github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor/internal/metadata"
)

type klogProcessor struct {
	telemetry  *metadata.TelemetryBuilder
	parser     klogline.Parser
	source     string
	original   string
	prefix     string
	yearFrom   YearFrom
	textAttrs  metric.AddOption
	jsonAttrs  metric.AddOption
	zapAttrs   metric.AddOption
	keepOrigin bool
}

func newKlogProcessor(set processor.Settings, cfg *Config) (*klogProcessor, error) {
	loc, err := cfg.location()
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &klogProcessor{
		telemetry: tb,
		parser: klogline.Parser{
			Location: loc,
			SkipText: !cfg.hasFormat(formatText),
			SkipJSON: !cfg.hasFormat(formatJSON),
			Zap:      cfg.hasFormat(formatZap),
		},
		source:     cfg.SourceAttribute,
		original:   cfg.OriginalAttribute,
		prefix:     cfg.AttributesPrefix,
		yearFrom:   cfg.YearFrom,
		keepOrigin: cfg.KeepOriginal,
		textAttrs:  metric.WithAttributeSet(attribute.NewSet(attribute.String("format", formatText))),
		jsonAttrs:  metric.WithAttributeSet(attribute.NewSet(attribute.String("format", formatJSON))),
		zapAttrs:   metric.WithAttributeSet(attribute.NewSet(attribute.String("format", formatZap))),
	}, nil
}

func (p *klogProcessor) shutdown(context.Context) error {
	p.telemetry.Shutdown()
	return nil
}

// counts are one batch's telemetry, recorded once per batch.
type counts struct {
	text, json, zap, notKlog, partialText, partialJSON, partialZap, renamed int64
}

// records recycles parse records (and their field slices) between batches.
var records = sync.Pool{New: func() any { return new(klogline.Record) }}

func (p *klogProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	var c counts
	rec := records.Get().(*klogline.Record)
	defer func() {
		rec.Release()
		records.Put(rec)
	}()
	now := time.Now()
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				p.processRecord(lrs.At(k), rec, now, &c)
			}
		}
	}
	p.record(ctx, &c)
	return ld, nil
}

func (p *klogProcessor) record(ctx context.Context, c *counts) {
	t := p.telemetry
	if c.text > 0 {
		t.ProcessorKlogParserRecordsParsed.Add(ctx, c.text, p.textAttrs)
	}
	if c.json > 0 {
		t.ProcessorKlogParserRecordsParsed.Add(ctx, c.json, p.jsonAttrs)
	}
	if c.partialText > 0 {
		t.ProcessorKlogParserRecordsPartial.Add(ctx, c.partialText, p.textAttrs)
	}
	if c.partialJSON > 0 {
		t.ProcessorKlogParserRecordsPartial.Add(ctx, c.partialJSON, p.jsonAttrs)
	}
	if c.zap > 0 {
		t.ProcessorKlogParserRecordsParsed.Add(ctx, c.zap, p.zapAttrs)
	}
	if c.partialZap > 0 {
		t.ProcessorKlogParserRecordsPartial.Add(ctx, c.partialZap, p.zapAttrs)
	}
	if c.renamed > 0 {
		t.ProcessorKlogParserPairsRenamed.Add(ctx, c.renamed)
	}
	if c.notKlog > 0 {
		t.ProcessorKlogParserRecordsNotKlog.Add(ctx, c.notKlog)
	}
}

// referenceTime is the time the year of a text header is inferred from.
func (p *klogProcessor) referenceTime(lr plog.LogRecord, now time.Time) time.Time {
	switch p.yearFrom {
	case yearFromNow:
		return now
	case yearFromObservedTimestamp:
		if ts := lr.ObservedTimestamp(); ts != 0 {
			return ts.AsTime()
		}
		return now
	case yearFromTimestamp:
		if ts := lr.Timestamp(); ts != 0 {
			return ts.AsTime()
		}
		return now
	}
	if ts := lr.Timestamp(); ts != 0 {
		return ts.AsTime()
	}
	if ts := lr.ObservedTimestamp(); ts != 0 {
		return ts.AsTime()
	}
	return now
}

func (p *klogProcessor) processRecord(lr plog.LogRecord, rec *klogline.Record, now time.Time, c *counts) {
	attrs := lr.Attributes()
	src := lr.Body()
	if p.source != "" {
		v, ok := attrs.Get(p.source)
		if !ok {
			c.notKlog++
			return
		}
		src = v
	}
	if src.Type() != pcommon.ValueTypeStr {
		c.notKlog++
		return
	}
	line := src.Str()
	var ref time.Time
	if len(line) > 0 && line[0] != '{' {
		ref = p.referenceTime(lr, now)
	}
	format := p.parser.Parse(line, ref, rec)
	switch format {
	case klogline.FormatText:
		c.text++
		if rec.Partial() {
			c.partialText++
		}
	case klogline.FormatJSON:
		c.json++
		if rec.Partial() {
			c.partialJSON++
		}
	case klogline.FormatZap:
		c.zap++
		if rec.Partial() {
			c.partialZap++
		}
	default:
		c.notKlog++
		return
	}

	room := attrs.Len() + len(rec.Fields) + extraAttributes(rec, p.keepOrigin)
	if len(rec.Fields) > 0 {
		room += referenceRoom
	}
	attrs.EnsureCapacity(room)
	if p.keepOrigin {
		attrs.PutStr(p.original, line)
	}
	lr.Body().SetStr(rec.Message)
	if rec.Severity != klogline.SeverityUnset {
		lr.SetSeverityNumber(severityNumber(rec.Severity))
		lr.SetSeverityText(rec.Severity.String())
	}
	if rec.Level != "" {
		lr.SetSeverityText(rec.Level) // zap's level as written
	}
	if rec.HasTime {
		lr.SetTimestamp(pcommon.NewTimestampFromTime(rec.Time))
	}
	for i := range rec.Fields {
		f := &rec.Fields[i]
		key := f.Key
		if p.prefix != "" {
			key = p.prefix + key
		}
		if attr.Reserved(key) {
			// Log content never writes an identity attribute or one the project owns.
			key = attr.KlogPairPrefix + key
			c.renamed++
		}
		putValue(attrs.PutEmpty(key), &f.Value)
	}
	if rec.HasThread {
		attrs.PutInt(attr.ThreadID, rec.ThreadID)
	}
	if rec.HasLine {
		attrs.PutStr(attr.CodeFilePath, rec.File)
		attrs.PutInt(attr.CodeLineNumber, rec.Line)
	} else if rec.Caller != "" {
		attrs.PutStr(attr.CodeFilePath, rec.Caller)
	}
	if rec.HasVerbose {
		attrs.PutInt(attr.KlogVerbosity, rec.Verbosity)
	}
	if rec.HasErr {
		putValue(attrs.PutEmpty(attr.ExceptionMessage), &rec.Err)
	}
	attrs.PutStr(attr.KlogFormat, format.String())
	if rec.Partial() {
		attrs.PutStr(attr.KlogParseError, rec.Problem)
		if rec.Unparsed != "" {
			attrs.PutStr(attr.KlogUnparsed, rec.Unparsed)
		}
	}
}

// extraAttributes counts the attributes processRecord writes besides the pairs, so that the
// attribute array is sized once.
// referenceRoom is spare room in the attributes of a record with key/values: object_ref,
// which follows klog_parser in the shipped pipelines, writes up to five attributes for the
// object a key/value refers to (kind, API version, namespace, name, UID). Without the room
// it grows the map again, and copies it, for most such records.
const referenceRoom = 5

func extraAttributes(rec *klogline.Record, keepOriginal bool) int {
	n := 1 // klog.format
	for _, has := range [...]bool{rec.HasThread, rec.HasVerbose, rec.HasErr, keepOriginal, rec.Partial(), rec.Unparsed != ""} {
		if has {
			n++
		}
	}
	if rec.HasLine {
		n += 2
	} else if rec.Caller != "" {
		n++
	}
	return n
}

func severityNumber(s klogline.Severity) plog.SeverityNumber {
	switch s {
	case klogline.SeverityInfo:
		return plog.SeverityNumberInfo
	case klogline.SeverityWarning:
		return plog.SeverityNumberWarn
	case klogline.SeverityError:
		return plog.SeverityNumberError
	case klogline.SeverityFatal:
		return plog.SeverityNumberFatal
	case klogline.SeverityDebug:
		return plog.SeverityNumberDebug
	}
	return plog.SeverityNumberUnspecified
}

// putValue writes v into dst, keeping its type; objects become maps and arrays slices.
func putValue(dst pcommon.Value, v *klogline.Value) {
	switch v.Kind {
	case klogline.KindString:
		dst.SetStr(v.Str)
	case klogline.KindInt:
		dst.SetInt(v.Int)
	case klogline.KindDouble:
		dst.SetDouble(v.Double)
	case klogline.KindBool:
		dst.SetBool(v.Bool)
	case klogline.KindMap:
		m := dst.SetEmptyMap()
		m.EnsureCapacity(len(v.Items))
		for i := range v.Items {
			putValue(m.PutEmpty(v.Items[i].Key), &v.Items[i].Value)
		}
	case klogline.KindSlice:
		s := dst.SetEmptySlice()
		s.EnsureCapacity(len(v.Items))
		for i := range v.Items {
			putValue(s.AppendEmpty(), &v.Items[i].Value)
		}
	}
	// KindNull stays an empty value.
}
