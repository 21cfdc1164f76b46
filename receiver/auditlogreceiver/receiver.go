// SPDX-License-Identifier: Apache-2.0

package auditlogreceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/auditlogreceiver/internal/metadata"
)

const (
	// checkpointKey is the storage key of the offsets (design.md rule 3).
	checkpointKey = "audit_log.offsets"
	// fingerprintLen is how many first bytes of a file identify it across restarts.
	fingerprintLen = 64
	// readBudget bounds the bytes read from one file before the records so far are passed on.
	readBudget = 4 << 20
	// maxPending bounds the auditd events held per file waiting for their EOE or timeout.
	maxPending = 4096
	// auditType is the log type the receiver puts on every resource: the input decides it.
	auditType = "audit"
)

// fileID identifies a file while it exists: rotation by rename keeps it.
type fileID struct{ Dev, Ino uint64 }

// event is one auditd event being assembled (design.md rule 6), or one complete record of
// another kind.
type event struct {
	serial     uint64
	start, end int64 // offsets: the first line's start, the last line's end
	lines      []string
	recs       []auditdRecord
	last       time.Time
	complete   bool
	// parseErr and kube are set for a line that is a record by itself.
	parseErr error
	kube     map[string]any
}

type fileState struct {
	id fileID
	// path is where the file is now; series where it was first seen, the resource's
	// log.file.path (auditd's audit.log keeps its stream after it becomes audit.log.1).
	path, series string
	fp           []byte
	// committed: every record before it was accepted; read: lines parsed up to it. skipping:
	// inside a line longer than max_line_bytes (at read, and at committed).
	committed, read             int64
	skipping, committedSkipping bool
	pending                     []*event
	seen                        bool
}

// savedFile is one file's checkpoint.
type savedFile struct {
	Dev         uint64 `json:"dev"`
	Ino         uint64 `json:"ino"`
	Fingerprint []byte `json:"fp"`
	Offset      int64  `json:"offset"`
	Skipping    bool   `json:"skipping,omitempty"`
	Path        string `json:"path"`
}

type auditReceiver struct {
	cfg    *Config
	set    receiver.Settings
	next   consumer.Logs
	tb     *metadata.TelemetryBuilder
	logger *zap.Logger

	client     storage.Client
	saved      map[fileID]savedFile
	files      map[fileID]*fileState
	firstStart bool
	buf        []byte

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newReceiver(set receiver.Settings, cfg *Config, next consumer.Logs) (*auditReceiver, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &auditReceiver{
		cfg: cfg, set: set, next: next, tb: tb, logger: set.Logger,
		saved: map[fileID]savedFile{}, files: map[fileID]*fileState{}, firstStart: true,
	}, nil
}

// Start loads the checkpoint and starts the read loop.
func (r *auditReceiver) Start(ctx context.Context, host component.Host) error {
	if r.cfg.Storage != nil {
		ext, ok := host.GetExtensions()[*r.cfg.Storage]
		if !ok {
			return fmt.Errorf("storage extension %s not found", r.cfg.Storage)
		}
		se, ok := ext.(storage.Extension)
		if !ok {
			return fmt.Errorf("extension %s is not a storage extension", r.cfg.Storage)
		}
		client, err := se.GetClient(ctx, component.KindReceiver, r.set.ID, "")
		if err != nil {
			return fmt.Errorf("storage client: %w", err)
		}
		r.client = client
		b, err := client.Get(ctx, checkpointKey)
		if err != nil {
			r.tb.ReceiverAuditLogCheckpointErrors.Add(ctx, 1)
			return fmt.Errorf("loading the checkpoint: %w", err)
		}
		if b != nil {
			r.firstStart = false
			var list []savedFile
			if err := json.Unmarshal(b, &list); err != nil {
				// Unreadable: every file is read from its beginning (at least once).
				r.tb.ReceiverAuditLogCheckpointErrors.Add(ctx, 1)
				r.logger.Error("unreadable checkpoint; reading the audit logs from their beginning", zap.Error(err))
			}
			for _, s := range list {
				r.saved[fileID{s.Dev, s.Ino}] = s
			}
		}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(1)
	go r.run(runCtx)
	return nil
}

// Shutdown stops the read loop and closes the storage client. Events still being assembled are
// not passed on: their offsets are not committed, so the next start reads them again.
func (r *auditReceiver) Shutdown(ctx context.Context) error {
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
	r.tb.ReceiverAuditLogFiles.Add(ctx, -int64(len(r.files)))
	r.files = map[fileID]*fileState{}
	var err error
	if r.client != nil {
		err = r.client.Close(ctx)
		r.client = nil
	}
	r.tb.Shutdown()
	return err
}

func (r *auditReceiver) run(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.PollInterval)
	defer t.Stop()
	for {
		r.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll finds the files, reads what is new and passes on the complete records, again while a
// file had more than one read budget.
func (r *auditReceiver) poll(ctx context.Context) {
	r.discover(ctx)
	r.firstStart = false
	for ctx.Err() == nil {
		more := false
		now := time.Now()
		for _, f := range r.sorted() {
			if r.readFile(ctx, f, now) {
				more = true
			}
		}
		if !r.emit(ctx, now) || !more {
			return
		}
	}
}

func (r *auditReceiver) sorted() []*fileState {
	out := make([]*fileState, 0, len(r.files))
	for _, f := range r.files {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

func statID(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{Dev: uint64(st.Dev), Ino: st.Ino}, true //nolint:unconvert // Dev's type differs between architectures
}

// discover matches the include patterns (design.md rule 2).
func (r *auditReceiver) discover(ctx context.Context) {
	for _, f := range r.files {
		f.seen = false
	}
	for _, pattern := range r.cfg.Include {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			id, ok := statID(fi)
			if !ok {
				continue
			}
			if f, ok := r.files[id]; ok {
				f.path, f.seen = p, true // renamed by a rotation: the same file
				continue
			}
			f := &fileState{id: id, path: p, series: p, seen: true}
			if s, ok := r.saved[id]; ok && hasPrefix(p, s.Fingerprint) {
				f.committed, f.read, f.fp = s.Offset, s.Offset, s.Fingerprint
				f.skipping, f.committedSkipping = s.Skipping, s.Skipping
			} else if r.firstStart && r.cfg.StartAt == StartAtEnd {
				f.committed, f.read = fi.Size(), fi.Size()
				f.fp = readPrefix(p, fingerprintLen)
			}
			r.files[id] = f
			r.tb.ReceiverAuditLogFiles.Add(ctx, 1)
		}
	}
	for id, f := range r.files {
		if f.seen {
			continue
		}
		// Gone (deleted by the rotation's retention): what is assembled is all there will be.
		for _, e := range f.pending {
			e.complete = true
		}
		if len(f.pending) == 0 {
			delete(r.files, id)
			r.tb.ReceiverAuditLogFiles.Add(ctx, -1)
		}
	}
}

func readPrefix(path string, n int) []byte {
	fh, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer func() { _ = fh.Close() }()
	b := make([]byte, n)
	k, _ := io.ReadFull(fh, b)
	return b[:k]
}

func hasPrefix(path string, fp []byte) bool {
	return bytes.Equal(readPrefix(path, len(fp)), fp)
}

// readFile reads f's complete lines from its read offset, within the read budget, and reports
// whether more is there.
func (r *auditReceiver) readFile(ctx context.Context, f *fileState, now time.Time) bool {
	if !f.seen {
		return false
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return false
	}
	defer func() { _ = fh.Close() }()
	fi, err := fh.Stat()
	if err != nil {
		return false
	}
	if id, ok := statID(fi); !ok || id != f.id {
		return false // replaced at this path since discovery: the next poll sorts it out
	}
	size := fi.Size()
	if size < f.read || (len(f.fp) > 0 && !hasPrefix(f.path, f.fp)) {
		// Truncated or rewritten in place (copytruncate): read again from the start.
		f.committed, f.read, f.skipping, f.committedSkipping, f.pending, f.fp = 0, 0, false, false, nil, nil
	}
	if len(f.fp) < fingerprintLen && size > int64(len(f.fp)) {
		f.fp = readPrefix(f.path, fingerprintLen)
	}
	budget := int64(readBudget)
	for f.read < size && budget > 0 && ctx.Err() == nil {
		if r.buf == nil {
			r.buf = make([]byte, 64<<10)
		}
		n, err := fh.ReadAt(r.buf, f.read)
		if n == 0 && err != nil {
			return false
		}
		data := r.buf[:n]
		consumed := 0
		for {
			i := bytes.IndexByte(data[consumed:], '\n')
			if i < 0 {
				break
			}
			start := f.read + int64(consumed)
			line := data[consumed : consumed+i]
			consumed += i + 1
			if f.skipping {
				f.skipping = false // the end of a line too long to keep
				continue
			}
			r.tb.ReceiverAuditLogLinesRead.Add(ctx, 1)
			r.line(f, string(line), start, f.read+int64(consumed), now)
		}
		if consumed == 0 {
			switch {
			case n < len(r.buf):
				return false // an incomplete last line: wait for its end
			case f.skipping:
				consumed = n
			case len(r.buf) > r.cfg.MaxLineBytes:
				f.skipping = true
				r.tb.ReceiverAuditLogLinesSkipped.Add(ctx, 1)
				r.logger.Warn("audit log line longer than max_line_bytes skipped", zap.String("path", f.path), zap.Int64("offset", f.read))
				consumed = n
			default:
				r.buf = make([]byte, min(2*len(r.buf), r.cfg.MaxLineBytes+1))
				continue
			}
		}
		f.read += int64(consumed)
		budget -= int64(consumed)
	}
	return f.read < size
}

// line adds one line (design.md rules 5 and 6).
func (r *auditReceiver) line(f *fileState, line string, start, end int64, now time.Time) {
	if r.cfg.Format == FormatKubernetes {
		e := &event{start: start, end: end, lines: []string{line}, complete: true, last: now}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m == nil {
			if err == nil {
				err = errors.New("not a JSON object")
			}
			e.parseErr = err
		} else {
			e.kube = m
		}
		f.pending = append(f.pending, e)
		return
	}
	rec, err := parseAuditd(line)
	if err != nil {
		f.pending = append(f.pending, &event{start: start, end: end, lines: []string{line}, complete: true, last: now, parseErr: err})
		return
	}
	// The event this record belongs to: the latest with its serial that is still open.
	for i := len(f.pending) - 1; i >= 0; i-- {
		e := f.pending[i]
		if e.parseErr == nil && e.kube == nil && e.serial == rec.Serial && !e.complete {
			e.lines, e.recs, e.end, e.last = append(e.lines, line), append(e.recs, rec), end, now
			e.complete = rec.Type == "EOE"
			return
		}
	}
	f.pending = append(f.pending, &event{
		serial: rec.Serial, start: start, end: end, lines: []string{line}, recs: []auditdRecord{rec},
		last: now, complete: rec.Type == "EOE",
	})
}

// emit passes on every complete event, commits the offsets and saves them (design.md rule 3).
// It returns false when the receiver is stopping.
func (r *auditReceiver) emit(ctx context.Context, now time.Time) bool {
	logs := plog.NewLogs()
	n := 0
	type taken struct {
		f         *fileState
		committed int64
		rest      []*event
	}
	var done []taken
	observed := pcommon.NewTimestampFromTime(now)
	for _, f := range r.sorted() {
		var out, rest []*event
		for i, e := range f.pending {
			if e.complete || now.Sub(e.last) >= r.cfg.EventTimeout || len(f.pending)-i > maxPending {
				out = append(out, e)
			} else {
				rest = append(rest, e)
			}
		}
		committed := f.read
		if len(rest) > 0 {
			committed = rest[0].start
		}
		if len(out) == 0 && committed == f.committed {
			continue
		}
		done = append(done, taken{f, committed, rest})
		if len(out) == 0 {
			continue
		}
		rl := logs.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr(attr.LogFilePath, f.series)
		rl.Resource().Attributes().PutStr(attr.LogType, auditType)
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName(metadata.ScopeName)
		for _, e := range out {
			r.toRecord(ctx, e, sl.LogRecords().AppendEmpty(), observed)
			n++
		}
	}
	if len(done) == 0 {
		return true
	}
	if n > 0 {
		if !r.consume(ctx, logs) {
			return false
		}
		r.tb.ReceiverAuditLogRecordsEmitted.Add(ctx, int64(n))
	}
	for _, t := range done {
		t.f.pending = t.rest
		t.f.committed = t.committed
		t.f.committedSkipping = t.f.skipping && t.committed == t.f.read
		if !t.f.seen && len(t.rest) == 0 {
			delete(r.files, t.f.id)
			r.tb.ReceiverAuditLogFiles.Add(ctx, -1)
		}
	}
	r.save(ctx)
	return true
}

// consume passes a batch on, retrying a refused one with backoff until it is accepted, the
// error is permanent (dropped, counted by the pipeline) or the receiver stops.
func (r *auditReceiver) consume(ctx context.Context, logs plog.Logs) bool {
	backoff := 50 * time.Millisecond
	for {
		err := r.next.ConsumeLogs(ctx, logs)
		if err == nil {
			return true
		}
		if consumererror.IsPermanent(err) {
			r.logger.Error("audit records dropped: permanent error", zap.Error(err))
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (r *auditReceiver) save(ctx context.Context) {
	if r.client == nil {
		return
	}
	list := make([]savedFile, 0, len(r.files))
	for _, f := range r.sorted() {
		list = append(list, savedFile{Dev: f.id.Dev, Ino: f.id.Ino, Fingerprint: f.fp, Offset: f.committed, Skipping: f.committedSkipping, Path: f.path})
		r.saved[f.id] = list[len(list)-1]
	}
	b, err := json.Marshal(list)
	if err == nil {
		err = r.client.Set(ctx, checkpointKey, b)
	}
	if err != nil {
		r.tb.ReceiverAuditLogCheckpointErrors.Add(ctx, 1)
		r.logger.Warn("saving the audit log checkpoint", zap.Error(err))
	}
}

// toRecord writes one event (design.md rule 7).
func (r *auditReceiver) toRecord(ctx context.Context, e *event, lr plog.LogRecord, observed pcommon.Timestamp) {
	lr.SetObservedTimestamp(observed)
	a := lr.Attributes()
	switch {
	case e.parseErr != nil:
		r.tb.ReceiverAuditLogParseErrors.Add(ctx, 1)
		lr.Body().SetStr(e.lines[0])
		a.PutStr(attr.AuditParseError, e.parseErr.Error())
	case e.kube != nil:
		_ = lr.Body().SetEmptyMap().FromRaw(e.kube)
		for _, k := range []string{"stageTimestamp", "requestReceivedTimestamp"} {
			if s, ok := e.kube[k].(string); ok {
				if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
					lr.SetTimestamp(pcommon.NewTimestampFromTime(t))
					break
				}
			}
		}
	default:
		lr.Body().SetStr(strings.Join(e.lines, "\n"))
		first := e.recs[0]
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.UnixMilli(first.Sec*1000 + first.Milli)))
		a.PutInt(attr.AuditSerial, int64(e.serial)) //nolint:gosec // a kernel counter, far below 2^63
		recs := a.PutEmptySlice(attr.AuditRecords)
		recs.EnsureCapacity(len(e.recs))
		for _, rec := range e.recs {
			m := recs.AppendEmpty().SetEmptyMap()
			m.PutStr("type", rec.Type)
			if rec.Node != "" {
				m.PutStr("node", rec.Node)
			}
			for _, f := range rec.Fields {
				putField(m, f.K, f.V)
			}
		}
	}
}

// putField sets k, turning a repeated key into a list of its values in order.
func putField(m pcommon.Map, k, v string) {
	if k == "type" || k == "node" {
		k = "_" + k // the record's own type and node stay unambiguous
	}
	old, ok := m.Get(k)
	if !ok {
		m.PutStr(k, v)
		return
	}
	if old.Type() == pcommon.ValueTypeSlice {
		old.Slice().AppendEmpty().SetStr(v)
		return
	}
	prev := old.Str()
	s := m.PutEmptySlice(k)
	s.AppendEmpty().SetStr(prev)
	s.AppendEmpty().SetStr(v)
}
