// SPDX-License-Identifier: Apache-2.0

package journalreceiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver/internal/journalfile"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver/internal/metadata"
)

// checkpointKey is the storage key of the positions (design.md rule 8).
const checkpointKey = "journal.positions"

// maxSequences bounds the sequence ids kept in the checkpoint: the oldest are dropped.
const maxSequences = 256

// position is the last entry passed on in one sequence (one seqnum id).
type position struct {
	Seqnum   uint64 `json:"seqnum"`
	Realtime uint64 `json:"realtime"`
	Cursor   string `json:"cursor"`
}

// file is one open journal file.
type file struct {
	path   string
	series string // the active file's path: where the data came from (design.md rule 9)
	r      *journalfile.Reader
	head   *journalfile.Entry
	// drained: no entry at the last look this poll; done: archived and wholly before the
	// checkpoint, or broken: never read again.
	drained, done bool
	seen          bool
}

type journalReceiver struct {
	cfg    *Config
	set    receiver.Settings
	next   consumer.Logs
	tb     *metadata.TelemetryBuilder
	logger *zap.Logger

	client storage.Client
	units  map[string]bool
	idents map[string]bool
	maxPri int

	files map[string]*file // by path
	last  map[journalfile.ID128]position
	// firstStart: no checkpoint was found: StartAtEnd applies to the files found first.
	firstStart bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newReceiver(set receiver.Settings, cfg *Config, next consumer.Logs) (*journalReceiver, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	maxPri, _ := cfg.Priority.level()
	r := &journalReceiver{
		cfg: cfg, set: set, next: next, tb: tb, logger: set.Logger, maxPri: maxPri,
		units: map[string]bool{}, idents: map[string]bool{},
		files: map[string]*file{}, last: map[journalfile.ID128]position{}, firstStart: true,
	}
	for _, u := range cfg.Units {
		r.units[u] = true
	}
	for _, i := range cfg.Identifiers {
		r.idents[i] = true
	}
	return r, nil
}

// Start loads the checkpoint and starts the read loop.
func (r *journalReceiver) Start(ctx context.Context, host component.Host) error {
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
			r.tb.ReceiverJournalCheckpointErrors.Add(ctx, 1)
			return fmt.Errorf("loading the checkpoint: %w", err)
		}
		if b != nil {
			r.firstStart = false
			if err := r.decodeCheckpoint(b); err != nil {
				// A checkpoint that cannot be read: start over from the files (at-least-once).
				r.tb.ReceiverJournalCheckpointErrors.Add(ctx, 1)
				r.logger.Error("unreadable checkpoint; reading the journal from its beginning", zap.Error(err))
			}
		}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(1)
	go r.run(runCtx)
	return nil
}

// Shutdown stops the read loop, closes the files and the storage client. Every batch accepted
// by the next consumer has its checkpoint saved before the next batch is read.
func (r *journalReceiver) Shutdown(ctx context.Context) error {
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
	for p, f := range r.files {
		_ = f.r.Close()
		delete(r.files, p)
		r.tb.ReceiverJournalFiles.Add(ctx, -1)
	}
	var err error
	if r.client != nil {
		err = r.client.Close(ctx)
		r.client = nil
	}
	r.tb.Shutdown()
	return err
}

func (r *journalReceiver) run(ctx context.Context) {
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

// poll finds files and passes on every new entry in batches.
func (r *journalReceiver) poll(ctx context.Context) {
	r.discover(ctx)
	r.firstStart = false
	for _, f := range r.files {
		f.drained = f.done
	}
	for ctx.Err() == nil {
		logs, n, tentative, changed := r.collect(ctx)
		if !changed {
			return
		}
		if n > 0 && !r.consume(ctx, logs) {
			return // shutting down: this batch's checkpoint is not saved (read again after a restart)
		}
		r.tb.ReceiverJournalRecordsEmitted.Add(ctx, int64(n))
		r.commit(ctx, tentative)
	}
}

// consume passes a batch on, retrying a refused one with backoff until it is accepted, the
// error is permanent (the batch is dropped, counted by the pipeline) or the receiver stops.
func (r *journalReceiver) consume(ctx context.Context, logs plog.Logs) bool {
	backoff := 50 * time.Millisecond
	for {
		err := r.next.ConsumeLogs(ctx, logs)
		if err == nil {
			return true
		}
		if consumererror.IsPermanent(err) {
			r.logger.Error("journal batch refused permanently; dropped", zap.Int("records", logs.LogRecordCount()), zap.Error(err))
			return true
		}
		r.logger.Warn("journal batch refused; retrying", zap.Duration("retry_in", backoff), zap.Error(err))
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// discover opens new journal files and closes those gone (design.md rules 1 and 2).
func (r *journalReceiver) discover(ctx context.Context) {
	for _, f := range r.files {
		f.seen = false
	}
	for _, dir := range r.cfg.Directories {
		for _, pat := range []string{"*.journal", "*.journal~", "*/*.journal", "*/*.journal~"} {
			matches, _ := filepath.Glob(filepath.Join(dir, pat))
			for _, p := range matches {
				if f, ok := r.files[p]; ok {
					f.seen = true
					continue
				}
				r.open(ctx, p)
			}
		}
	}
	for p, f := range r.files {
		if !f.seen {
			_ = f.r.Close()
			delete(r.files, p)
			r.tb.ReceiverJournalFiles.Add(ctx, -1)
		}
	}
}

func (r *journalReceiver) open(ctx context.Context, path string) {
	jr, err := journalfile.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		// Counted once per poll it stays unreadable; a file just created may have no header yet.
		r.tb.ReceiverJournalCorruptSkips.Add(ctx, 1, metric.WithAttributes(attribute.String("what", "file")))
		r.logger.Debug("journal file not readable (yet)", zap.String("path", path), zap.Error(err))
		return
	}
	h := jr.Header()
	// The same file under its new name after a rotation (rule 2): keep the open reader.
	for p, f := range r.files {
		if fh := f.r.Header(); fh.FileID == h.FileID {
			_ = jr.Close()
			delete(r.files, p)
			f.path, f.seen = path, true
			r.files[path] = f
			return
		}
	}
	f := &file{path: path, series: seriesOf(path), r: jr, seen: true}
	archived := h.State == journalfile.StateArchived || strings.Contains(filepath.Base(path), "@")
	if p, ok := r.last[h.SeqnumID]; ok {
		jr.MinSeqnum = p.Seqnum + 1
		if archived && h.State != journalfile.StateOnline && h.TailEntrySeqnum <= p.Seqnum {
			f.done = true
		}
	} else if r.firstStart && r.cfg.StartAt == StartAtEnd {
		jr.MinSeqnum = h.TailEntrySeqnum + 1
		f.done = archived && h.State != journalfile.StateOnline
	}
	r.files[path] = f
	r.tb.ReceiverJournalFiles.Add(ctx, 1)
}

// seriesOf names the active file of a journal: system@...journal and system@...journal~ are
// archives of system.journal.
func seriesOf(path string) string {
	dir, base := filepath.Split(strings.TrimSuffix(path, "~"))
	if i := strings.IndexByte(base, '@'); i > 0 {
		base = base[:i] + ".journal"
	}
	return dir + base
}

// fill reads a file's next entry into head unless it has one or nothing is there.
func (r *journalReceiver) fill(ctx context.Context, f *file) {
	for f.head == nil && !f.drained {
		e, err := f.r.Next()
		switch {
		case err == nil:
			f.head = e
		case errors.Is(err, io.EOF):
			// An archived file is complete: nothing more will be appended (rule 9).
			f.drained = true
			f.done = f.r.Header().State == journalfile.StateArchived
		case errors.Is(err, journalfile.ErrCorrupt) && f.r.Broken() == nil:
			r.tb.ReceiverJournalCorruptSkips.Add(ctx, 1, metric.WithAttributes(attribute.String("what", "entry")))
			r.logger.Warn("unreadable journal entry skipped", zap.String("path", f.path), zap.Error(err))
		default:
			// The entry array chain is broken (or the file unreadable): everything reachable was
			// read; nothing after it can be (rule 6).
			r.tb.ReceiverJournalCorruptSkips.Add(ctx, 1, metric.WithAttributes(attribute.String("what", "file")))
			r.logger.Error("journal file unreadable from here on", zap.String("path", f.path), zap.Error(err))
			f.drained, f.done = true, true
		}
	}
}

// less orders two entries: by seqnum within one sequence, by realtime across sequences (rule 3).
func less(a, b *journalfile.Entry) bool {
	if a.SeqnumID == b.SeqnumID {
		return a.Seqnum < b.Seqnum
	}
	if a.Realtime != b.Realtime {
		return a.Realtime < b.Realtime
	}
	return a.SeqnumID.String() < b.SeqnumID.String()
}

// collect merges the files' entries into one batch of at most max_batch records. tentative
// holds the positions after it; changed reports whether any entry was taken.
func (r *journalReceiver) collect(ctx context.Context) (plog.Logs, int, map[journalfile.ID128]position, bool) {
	logs := plog.NewLogs()
	res := map[resKey]plog.LogRecordSlice{}
	tentative := map[journalfile.ID128]position{}
	pos := func(id journalfile.ID128) (position, bool) {
		if p, ok := tentative[id]; ok {
			return p, true
		}
		p, ok := r.last[id]
		return p, ok
	}
	paths := make([]string, 0, len(r.files))
	for p := range r.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	n, changed := 0, false
	observed := pcommon.NewTimestampFromTime(time.Now())
	// Entries filtered out count too, so that a journal where the selected units are rare is
	// still read in steps, each checkpointed, and a stop is not held up (rule 8).
	for examined := 0; n < r.cfg.MaxBatch && examined < 16*r.cfg.MaxBatch && ctx.Err() == nil; examined++ {
		var best *file
		for _, p := range paths {
			f := r.files[p]
			r.fill(ctx, f)
			if f.head != nil && (best == nil || less(f.head, best.head)) {
				best = f
			}
		}
		if best == nil {
			break
		}
		e := best.head
		best.head = nil
		changed = true
		if p, ok := pos(e.SeqnumID); ok && e.Seqnum <= p.Seqnum {
			r.tb.ReceiverJournalDuplicatesSkipped.Add(ctx, 1)
			continue
		}
		tentative[e.SeqnumID] = position{Seqnum: e.Seqnum, Realtime: e.Realtime, Cursor: e.Cursor()}
		r.tb.ReceiverJournalEntriesRead.Add(ctx, 1)
		if !r.match(e) {
			continue
		}
		h := best.r.Header()
		k := resKey{series: best.series, machine: h.MachineID, host: string(field(e, "_HOSTNAME")), unit: string(field(e, "_SYSTEMD_UNIT"))}
		recs, ok := res[k]
		if !ok {
			rl := logs.ResourceLogs().AppendEmpty()
			ra := rl.Resource().Attributes()
			ra.PutStr(attr.LogFilePath, k.series)
			ra.PutStr(attr.HostID, k.machine.String())
			if k.host != "" {
				ra.PutStr(attr.HostName, k.host)
			}
			if k.unit != "" {
				ra.PutStr(attr.JournalUnit, k.unit)
			}
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(metadata.ScopeName)
			recs = sl.LogRecords()
			res[k] = recs
		}
		toRecord(e, recs.AppendEmpty(), observed)
		n++
	}
	return logs, n, tentative, changed
}

type resKey struct {
	series  string
	machine journalfile.ID128
	host    string
	unit    string // _SYSTEMD_UNIT, written by journald itself: with the file, the stream
}

func field(e *journalfile.Entry, name string) []byte {
	v, _ := e.Get(name)
	return v
}

// match applies the filters (rule 7): a unit or an identifier listed (both lists empty: any),
// and a priority at most the configured one (none: passes).
func (r *journalReceiver) match(e *journalfile.Entry) bool {
	if p, ok := e.Get("PRIORITY"); ok {
		if n, err := strconv.Atoi(string(p)); err == nil && n > r.maxPri {
			return false
		}
	}
	if len(r.units) == 0 && len(r.idents) == 0 {
		return true
	}
	if u, ok := e.Get("_SYSTEMD_UNIT"); ok && r.units[string(u)] {
		return true
	}
	if i, ok := e.Get("SYSLOG_IDENTIFIER"); ok && r.idents[string(i)] {
		return true
	}
	return false
}

// severities maps PRIORITY 0-7 (README: Severity).
var severities = [8]struct {
	n    plog.SeverityNumber
	text string
}{
	{plog.SeverityNumberFatal4, "emerg"},
	{plog.SeverityNumberFatal3, "alert"},
	{plog.SeverityNumberFatal, "crit"},
	{plog.SeverityNumberError, "err"},
	{plog.SeverityNumberWarn, "warning"},
	{plog.SeverityNumberInfo2, "notice"},
	{plog.SeverityNumberInfo, "info"},
	{plog.SeverityNumberDebug, "debug"},
}

// toRecord writes an entry into a log record (rules 10 and 11).
func toRecord(e *journalfile.Entry, lr plog.LogRecord, observed pcommon.Timestamp) {
	if msg, ok := e.Get("MESSAGE"); ok {
		if utf8.Valid(msg) {
			lr.Body().SetStr(string(msg))
		} else {
			lr.Body().SetEmptyBytes().FromRaw(msg)
		}
	}
	ts := e.Realtime
	if s, ok := e.Get("_SOURCE_REALTIME_TIMESTAMP"); ok {
		if v, err := strconv.ParseUint(string(s), 10, 64); err == nil && v > 0 {
			ts = v
		}
	}
	lr.SetTimestamp(pcommon.Timestamp(ts * 1000))
	lr.SetObservedTimestamp(observed)
	if p, ok := e.Get("PRIORITY"); ok && len(p) == 1 && p[0] >= '0' && p[0] <= '7' {
		s := severities[p[0]-'0']
		lr.SetSeverityNumber(s.n)
		lr.SetSeverityText(s.text)
	}
	a := lr.Attributes()
	for _, m := range []struct{ field, name string }{
		{"SYSLOG_IDENTIFIER", attr.JournalIdentifier},
		{"_TRANSPORT", attr.JournalTransport},
	} {
		if v, ok := e.Get(m.field); ok {
			a.PutStr(m.name, string(v))
		}
	}
	if v, ok := e.Get("_PID"); ok {
		if pid, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			a.PutInt(attr.ProcessPID, pid)
		}
	}
	a.PutStr(attr.JournalBootID, e.BootID.String())
	a.PutStr(attr.JournalCursor, e.Cursor())
	if e.BadFields > 0 {
		a.PutInt(attr.JournalUnreadableFields, int64(e.BadFields))
	}
}

// commit makes a batch's positions the receiver's and saves them.
func (r *journalReceiver) commit(ctx context.Context, tentative map[journalfile.ID128]position) {
	for id, p := range tentative {
		r.last[id] = p
	}
	if len(r.last) > maxSequences {
		ids := make([]journalfile.ID128, 0, len(r.last))
		for id := range r.last {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return r.last[ids[i]].Realtime < r.last[ids[j]].Realtime })
		for _, id := range ids[:len(ids)-maxSequences] {
			delete(r.last, id)
		}
	}
	if r.client == nil {
		return
	}
	if err := r.client.Set(ctx, checkpointKey, r.encodeCheckpoint()); err != nil {
		r.tb.ReceiverJournalCheckpointErrors.Add(ctx, 1)
		r.logger.Warn("saving the journal checkpoint failed; saved with the next batch", zap.Error(err))
	}
}

func (r *journalReceiver) encodeCheckpoint() []byte {
	m := make(map[string]position, len(r.last))
	for id, p := range r.last {
		m[id.String()] = p
	}
	b, _ := json.Marshal(m)
	return b
}

func (r *journalReceiver) decodeCheckpoint(b []byte) error {
	var m map[string]position
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for s, p := range m {
		var id journalfile.ID128
		if len(s) != 32 {
			return fmt.Errorf("sequence id %q", s)
		}
		for i := range 16 {
			v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
			if err != nil {
				return fmt.Errorf("sequence id %q", s)
			}
			id[i] = byte(v)
		}
		r.last[id] = p
	}
	return nil
}
