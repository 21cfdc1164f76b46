// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/criline"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/joiner"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/podpath"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/tracker"
)

// recMeta is one record of a batch; its bytes live in the batch arena.
type recMeta struct {
	time               int64
	bodyStart, bodyEnd int
	tagsStart, tagsEnd int
	stream             criline.Stream
	flags              tracker.RecordFlags
}

// batch is the records of one reader turn. Bodies and tags are copied into one arena that
// becomes a single string without another copy, so a batch costs one allocation for all its
// text.
type batch struct {
	recs     []recMeta
	arena    string
	built    bool
	observed time.Time
}

func (b *batch) len() int { return len(b.recs) }

// detach copies a batch out of the emitter's scratch space, to be kept for a retry.
func (b *batch) detach() *batch {
	return &batch{recs: slices.Clone(b.recs), arena: b.arena, built: true, observed: b.observed}
}

// emitter collects a reader's records into a batch. One emitter serves all readers in turn.
type emitter struct {
	includePath bool
	// extract writes the configured attributes of a file's Pod (nil without pod_metadata).
	extract *extractor
	cur     batch
	// text holds the current batch's bodies and tags; the batch takes it as its arena
	// (strings.Builder hands out its bytes as a string without copying them, and allocates
	// without clearing). lastText is the size of the last batch's text, to size the next.
	text     strings.Builder
	lastText int
}

// maxTextReserve bounds the room reserved for a batch's text up front.
const maxTextReserve = 8 << 20

func (e *emitter) begin(_ *fileState, now time.Time) *batch {
	e.cur.recs = e.cur.recs[:0]
	e.cur.arena, e.cur.built = "", false
	e.cur.observed = now
	if e.text.Len() > 0 {
		e.text = strings.Builder{} // records of a batch that was not built
	}
	return &e.cur
}

// sink is the tracker's record callback.
func (e *emitter) sink(rec *tracker.Record) {
	m := recMeta{time: rec.Time, stream: rec.Stream, flags: rec.Flags}
	if e.text.Cap() == 0 {
		// Room for about the last batch's text, reserved when the first record comes, so a
		// quiet file's turn allocates nothing.
		e.text.Grow(min(e.lastText+e.lastText/8, maxTextReserve) + len(rec.Body) + len(rec.Tags))
	}
	m.bodyStart = e.text.Len()
	e.text.Write(rec.Body)
	m.bodyEnd = e.text.Len()
	m.tagsStart = m.bodyEnd
	e.text.Write(rec.Tags)
	m.tagsEnd = e.text.Len()
	e.cur.recs = append(e.cur.recs, m)
}

// logs builds the batch's pdata: one ResourceLogs for the file.
func (b *batch) logs(e *emitter, fs *fileState) plog.Logs {
	if !b.built {
		b.arena, b.built = e.text.String(), true
		e.lastText = e.text.Len()
		e.text = strings.Builder{} // the arena keeps the bytes; the next batch writes new ones
	}
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	fs.resource.copyTo(rl.Resource().Attributes(), e.extract)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	lrs := sl.LogRecords()
	lrs.EnsureCapacity(len(b.recs))
	observed := pcommon.NewTimestampFromTime(b.observed)
	for i := range b.recs {
		m := &b.recs[i]
		lr := lrs.AppendEmpty()
		if m.time != 0 {
			lr.SetTimestamp(pcommon.Timestamp(m.time)) //nolint:gosec // CRI times are after 1970
		}
		lr.SetObservedTimestamp(observed)
		lr.Body().SetStr(b.arena[m.bodyStart:m.bodyEnd])
		attrs := lr.Attributes()
		n := 1
		if m.tagsEnd > m.tagsStart {
			n++
		}
		if m.flags != 0 {
			n += 2
		}
		if e.includePath {
			n++
		}
		attrs.EnsureCapacity(n)
		if m.stream != 0 {
			attrs.PutStr(attr.LogIOStream, m.stream.String())
		}
		if m.tagsEnd > m.tagsStart {
			attrs.PutStr(attr.CRITags, b.arena[m.tagsStart:m.tagsEnd])
		}
		if e.includePath {
			attrs.PutStr(attr.LogFilePath, fs.resource.path)
		}
		if m.flags != 0 {
			putFlags(attrs, m.flags)
		}
	}
	return ld
}

func putFlags(attrs pcommon.Map, f tracker.RecordFlags) {
	if f&tracker.ParseError != 0 {
		attrs.PutBool(attr.CRIParseError, true)
	}
	if f&joiner.Truncated != 0 {
		attrs.PutBool(attr.CRITruncated, true)
	}
	if f&joiner.Flushed != 0 {
		attrs.PutBool(attr.CRIFlushed, true)
	}
	if f&joiner.InvalidUTF8 != 0 {
		attrs.PutBool(attr.CRIInvalidUTF8, true)
	}
	if f&joiner.Continued != 0 {
		attrs.PutBool(attr.CRIContinued, true)
	}
	if f&tracker.Unterminated != 0 {
		attrs.PutBool(attr.CRIUnterminated, true)
	}
}

// resourceAttrs are what a file's resource attributes come from: its path and what the path
// says. Each batch writes them (copyTo) rather than copying a map kept per file, which would
// cost as much per batch and a few hundred bytes per open file.
type resourceAttrs struct {
	path string
	meta podpath.Meta // substrings of the path
	// pod is the Pod's metadata, from the pod_metadata source (nil: not known).
	pod *podmeta.Pod
}

func resourceFor(rd *tracker.Reader) resourceAttrs {
	return resourceAttrs{path: rd.Path, meta: rd.Meta}
}

// copyTo writes the resource attributes into dst: the path's, then what x extracts from the
// Pod's metadata when it is known.
func (r *resourceAttrs) copyTo(dst pcommon.Map, x *extractor) {
	dst.EnsureCapacity(dst.Len() + 6)
	put := func(k, v string) {
		if v != "" {
			dst.PutStr(k, v)
		}
	}
	put(attr.K8sNamespaceName, r.meta.Namespace)
	put(attr.K8sPodName, r.meta.PodName)
	put(attr.K8sPodUID, r.meta.PodUID)
	put(attr.K8sContainerName, r.meta.ContainerName)
	if r.meta.RestartCount >= 0 {
		dst.PutInt(attr.K8sContainerRestartCount, int64(r.meta.RestartCount))
	}
	put(attr.ContainerID, r.meta.ContainerID)
	if r.pod == nil || x == nil {
		return
	}
	if r.meta.PodUID == "" { // the /var/log/containers layout has no uid
		put(attr.K8sPodUID, r.pod.UID)
	}
	if r.meta.Namespace == "" { // the older /var/log/pods layout has only the uid
		put(attr.K8sNamespaceName, r.pod.Namespace)
		put(attr.K8sPodName, r.pod.Name)
	}
	x.copyTo(r.pod, dst)
}
