// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

// maxBatch bounds the notifications turned into one batch of records (and one checkpoint write).
const maxBatch = 1000

// batchLinger is how long a batch gathers notifications after its first (design.md rule 5.5).
const batchLinger = 200 * time.Millisecond

// finishTimeout bounds, at shutdown or loss of the Lease, the wait for a batch already handed
// to the consumer and for the checkpoint write after it.
const finishTimeout = 30 * time.Second

// errGone reports a 410 Gone: the resource version was compacted, the watch loop relists.
var errGone = errors.New("resource version expired (410 Gone)")

// term is one run of the watch loops: from a start (or the acquisition of the Lease) to
// shutdown (or the loss of the Lease). Its series table starts empty and is rebuilt by the list.
type term struct {
	cfg        *Config
	client     kubernetes.Interface
	eventsV1   bool
	nextLogs   consumer.Logs   // nil without a logs pipeline
	nextTraces consumer.Traces // nil without a traces pipeline
	store      checkpointStore // nil: no checkpoint
	tel        *metadata.TelemetryBuilder
	logger     *zap.Logger
	builder    recordBuilder
	spans      spanBuilder
	emit       map[state]bool
	now        func() time.Time

	// number and holder name this term in the checkpoint (rule 5.7): the Lease's transitions
	// when it was acquired and this replica's identity (0 and "" without leader election).
	number int64
	holder string
	spanQ  *spanQueue // nil without a traces pipeline
	stop   context.CancelFunc

	mu       sync.Mutex // guards table, cp, the save state and the emit path
	table    *seriesTable
	cp       *checkpoint // nil until the first save when there was none
	dirty    bool        // cp is ahead of the stored checkpoint
	lastSave time.Time
	fenced   bool // a newer term wrote the checkpoint: never write again
}

func newTerm(r *kubeEventsReceiver, client kubernetes.Interface, eventsV1 bool, store checkpointStore, number int64, holder string) *term {
	t := &term{
		cfg: r.cfg, client: client, eventsV1: eventsV1, nextLogs: r.nextLogs, nextTraces: r.nextTraces, store: store,
		tel: r.tel, logger: r.logger, now: time.Now, number: number, holder: holder, spanQ: r.spanQ,
		emit: map[state]bool{},
		table: newSeriesTable(seriesTimers{
			FinishWindow: r.cfg.Series.FinishWindow, HeartbeatTimeout: r.cfg.Series.HeartbeatTimeout,
			FinishAfter: r.cfg.Series.FinishAfter, OngoingInterval: r.cfg.Series.OngoingInterval,
			TombstoneTTL: r.cfg.Series.TombstoneTTL, MaxOpen: r.cfg.Series.MaxOpen,
		}),
	}
	t.table.term = number
	for _, s := range r.cfg.Series.Emit {
		for st, name := range stateNames {
			if name == s {
				t.emit[st] = true
			}
		}
	}
	var objectContext func(objref.Ref) (trace.SpanContext, bool)
	if src := r.traceContext; src != nil {
		objectContext = func(ref objref.Ref) (trace.SpanContext, bool) {
			sc, ok := src.SpanContextForObject(context.Background(), ref.APIVersion, ref.Kind, ref.Namespace, ref.Name, ref.UID)
			return sc, ok && sc.HasTraceID() && sc.HasSpanID()
		}
	}
	t.builder = recordBuilder{
		clusterName:   r.cfg.ClusterName,
		putRef:        putObjectRef,
		objectContext: objectContext,
		rejected: func(role, reason string) {
			t.tel.ReceiverKubeEventsReferencesRejected.Add(context.Background(), 1,
				metric.WithAttributes(attribute.String("role", role), attribute.String("reason", reason)))
		},
	}
	t.spans = spanBuilder{
		clusterName: r.cfg.ClusterName, mode: r.cfg.Spans.Mode,
		objectContext: objectContext, putRef: putObjectRef,
	}
	return t
}

// run loads the checkpoint, then runs one watch loop per namespace and the silence sweep until
// ctx ends.
func (t *term) run(ctx context.Context) {
	ctx, t.stop = context.WithCancel(ctx)
	defer t.stop()
	if t.store != nil {
		for ctx.Err() == nil {
			cp, err := t.store.Load(ctx)
			if errors.Is(err, errBadCheckpoint) {
				t.tel.ReceiverKubeEventsCheckpointErrors.Add(ctx, 1)
				t.logger.Warn("the checkpoint cannot be decoded; starting without one", zap.Error(err))
				cp, err = nil, nil
			}
			if err == nil {
				t.cp = cp
				if cp != nil {
					t.table.restore(cp.Series)
				}
				break
			}
			t.tel.ReceiverKubeEventsCheckpointErrors.Add(ctx, 1)
			t.logger.Warn("loading the checkpoint failed; retrying", zap.Error(err))
			if !sleepCtx(ctx, t.cfg.Client.Backoff.InitialInterval) {
				return
			}
		}
	}
	namespaces := t.cfg.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var wg sync.WaitGroup
	for _, ns := range namespaces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.watchLoop(ctx, ns)
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		t.sweepLoop(ctx)
	}()
	go func() {
		defer wg.Done()
		t.flushLoop(ctx)
	}()
	wg.Wait()
	// The end of a term (shutdown, loss of the Lease) writes the last state (rule 5.5). With
	// leader election within lease_duration - renew_deadline: a term that lost the Lease is done
	// before a standby can take it (rule 6); a later write would be merged or fenced (rule 5.7).
	budget := finishTimeout
	if le := t.cfg.LeaderElection; le.Enabled {
		budget = min(budget, le.LeaseDuration-le.RenewDeadline)
	}
	t.mu.Lock()
	t.save(ctx, budget)
	t.mu.Unlock()
}

// flushLoop writes the checkpoint when it is behind, at most once per checkpoint.interval.
func (t *term) flushLoop(ctx context.Context) {
	t.every(ctx, t.cfg.Checkpoint.Interval, func() {
		if t.now().Sub(t.lastSave) >= t.cfg.Checkpoint.Interval {
			t.save(ctx, finishTimeout)
		}
	})
}

func (t *term) sweepLoop(ctx context.Context) {
	t.every(ctx, t.cfg.Series.SweepInterval, func() {
		ts := t.table.sweep(t.now())
		if len(ts) > 0 {
			t.emitAndSave(ctx, ts, "", "")
		}
		t.tel.ReceiverKubeEventsSeriesOpen.Record(ctx, int64(len(t.table.open)))
	})
}

// every calls fn with t.mu held every d until ctx ends.
func (t *term) every(ctx context.Context, d time.Duration, fn func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		t.mu.Lock()
		fn()
		t.mu.Unlock()
	}
}

// backoff is an exponential backoff with full jitter that honors a server's Retry-After.
type backoff struct {
	initial, max, cur time.Duration
}

func (b *backoff) next(err error) time.Duration {
	if b.cur == 0 {
		b.cur = b.initial
	} else {
		b.cur = min(2*b.cur, b.max)
	}
	d := b.cur/2 + time.Duration(rand.Int64N(int64(b.cur/2)+1)) //nolint:gosec // jitter, not security
	if secs, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(secs)*time.Second > d {
		d = time.Duration(secs) * time.Second
	}
	return d
}

func (b *backoff) reset() { b.cur = 0 }

func sleepCtx(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// watchLoop lists, then watches from the list's resource version, re-opening the watch after a
// normal end and relisting only after 410 Gone (design.md rule 5.1).
func (t *term) watchLoop(ctx context.Context, ns string) {
	b := &backoff{initial: t.cfg.Client.Backoff.InitialInterval, max: t.cfg.Client.Backoff.MaxInterval}
	rv := ""
	for ctx.Err() == nil {
		var err error
		if rv == "" {
			rv, err = t.relist(ctx, ns)
		} else {
			var delivered bool
			delivered, err = t.watchOnce(ctx, ns, &rv)
			if delivered {
				b.reset()
			}
			if err == nil {
				t.tel.ReceiverKubeEventsWatchRestarts.Add(ctx, 1)
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errGone) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			t.tel.ReceiverKubeEventsGone.Add(ctx, 1)
			t.logger.Info("resource version expired; relisting", zap.String("namespace", ns))
			rv = ""
			continue
		}
		if err != nil {
			d := b.next(err)
			t.logger.Warn("listing or watching Events failed; backing off",
				zap.String("namespace", ns), zap.Duration("backoff", d), zap.Error(err))
			t.tel.ReceiverKubeEventsBackoffTime.Add(ctx, d.Seconds())
			if !sleepCtx(ctx, d) {
				return
			}
		}
	}
}

func (t *term) listOptions() metav1.ListOptions {
	return metav1.ListOptions{FieldSelector: t.cfg.FieldSelector}
}

// relist lists every Event page by page and returns the list's resource version (rule 5.3);
// a page whose continue token expired is replaced by one full list (rule 5.6).
func (t *term) relist(ctx context.Context, ns string) (string, error) {
	t.tel.ReceiverKubeEventsRelists.Add(ctx, 1)
	t.mu.Lock()
	cpRV := ""
	if t.cp != nil {
		cpRV = t.cp.ResourceVersions[ns]
	}
	t.mu.Unlock()
	opts := t.listOptions()
	opts.Limit = t.cfg.Client.PageSize
	var pending []transition
	// The open series before the list: those the list does not return were deleted meanwhile.
	t.mu.Lock()
	missing := t.openIn(ns)
	t.mu.Unlock()
	listRV := ""
	// observed holds the resource version of every item the pages so far passed to observe: a
	// full list after an expired continue token skips them unchanged (rule 5.6).
	var observed map[string]string
	fallback := false
	for {
		items, meta, err := t.list(ctx, ns, opts)
		if err != nil && opts.Continue != "" && apierrors.IsResourceExpired(err) {
			// The continue token outlived etcd's compaction: starting over would expire again
			// on a big list, so finish with one unpaged list at the current resource version.
			t.tel.ReceiverKubeEventsGone.Add(ctx, 1)
			t.tel.ReceiverKubeEventsRelistFallbacks.Add(ctx, 1)
			t.logger.Info("continue token expired; finishing the relist with one full list",
				zap.String("namespace", ns))
			opts.Continue, opts.Limit, fallback = "", 0, true
			t.mu.Lock()
			missing = t.openIn(ns)
			t.mu.Unlock()
			items, meta, err = t.list(ctx, ns, opts)
		}
		if err != nil {
			return "", err
		}
		listRV = meta.ResourceVersion
		now := t.now()
		t.mu.Lock()
		for i := range items {
			ev := items[i]
			delete(missing, ev.UID)
			t.tel.ReceiverKubeEventsEventsReceived.Add(ctx, 1)
			if !t.keep(&ev) {
				continue
			}
			if cpRV == "" || !rvAbove(ev.ResourceVersion, cpRV) {
				t.table.seed(ev, now) // idempotent: a full list after the pages may repeat it
				continue
			}
			created := true
			if fallback {
				if rv, ok := observed[ev.UID]; ok {
					if rv == ev.ResourceVersion {
						continue // handled by a page already
					}
					created = false // changed since its page: as a watch MODIFIED
				}
			} else {
				if observed == nil {
					observed = map[string]string{}
				}
				observed[ev.UID] = ev.ResourceVersion
			}
			pending = append(pending, t.table.observe(ev, now, created, false)...)
		}
		// Stream: what a page emitted leaves memory with the page (rule 5.9); the checkpoint
		// moves only after the last page.
		for len(pending) >= maxBatch {
			if !t.emitRecords(ctx, pending[:maxBatch]) {
				t.mu.Unlock()
				return "", ctx.Err()
			}
			pending = append([]transition(nil), pending[maxBatch:]...)
		}
		t.mu.Unlock()
		if meta.Continue == "" || fallback {
			break
		}
		opts.Continue = meta.Continue
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for uid := range missing {
		pending = append(pending, t.table.deleted(uid)...)
	}
	for len(pending) > maxBatch {
		if !t.emitRecords(ctx, pending[:maxBatch]) {
			return "", ctx.Err()
		}
		pending = pending[maxBatch:]
	}
	if !t.emitAndSave(ctx, pending, ns, listRV) {
		return "", ctx.Err()
	}
	return listRV, nil
}

// openIn is the set of open series in namespace ns (every namespace for ""); t.mu is held.
func (t *term) openIn(ns string) map[string]bool {
	out := map[string]bool{}
	for uid, o := range t.table.open {
		if ns == "" || o.ev.Namespace == ns {
			out[uid] = true
		}
	}
	return out
}

// rvAbove reports whether resource version a is newer than b; an unparsable one counts as new.
func rvAbove(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err != nil || c > 0
}

// list reads one page in the API the term watches.
func (t *term) list(ctx context.Context, ns string, opts metav1.ListOptions) ([]event, metav1.ListMeta, error) {
	if t.eventsV1 {
		l, err := t.client.EventsV1().Events(ns).List(ctx, opts)
		if err != nil {
			return nil, metav1.ListMeta{}, err
		}
		out := make([]event, len(l.Items))
		for i := range l.Items {
			out[i] = fromEventsV1(&l.Items[i])
		}
		return out, l.ListMeta, nil
	}
	l, err := t.client.CoreV1().Events(ns).List(ctx, opts)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	out := make([]event, len(l.Items))
	for i := range l.Items {
		out[i] = fromEventsV1(eventsV1FromCore(&l.Items[i]))
	}
	return out, l.ListMeta, nil
}

func (t *term) openWatch(ctx context.Context, ns, rv string) (watch.Interface, error) {
	opts := t.listOptions()
	opts.ResourceVersion = rv
	opts.AllowWatchBookmarks = true
	if t.eventsV1 {
		return t.client.EventsV1().Events(ns).Watch(ctx, opts)
	}
	return t.client.CoreV1().Events(ns).Watch(ctx, opts)
}

// toEvent normalizes a watched object; ok is false for other types.
func toEvent(obj runtime.Object) (event, string, bool) {
	switch o := obj.(type) {
	case *eventsv1.Event:
		return fromEventsV1(o), o.ResourceVersion, true
	case *corev1.Event:
		return fromEventsV1(eventsV1FromCore(o)), o.ResourceVersion, true
	}
	return event{}, "", false
}

// watchOnce watches from *rv until the watch ends, handling notifications in batches. It
// returns nil when the server ended the watch, errGone after 410.
func (t *term) watchOnce(ctx context.Context, ns string, rv *string) (delivered bool, err error) {
	w, err := t.openWatch(ctx, ns, *rv)
	if err != nil {
		return false, err
	}
	defer w.Stop()
	ch := w.ResultChan()
	for {
		var batch []watch.Event
		select {
		case <-ctx.Done():
			return delivered, ctx.Err()
		case e, ok := <-ch:
			if !ok {
				return delivered, nil
			}
			batch = append(batch, e)
		}
		// The watch hands over one notification at a time: gather what arrives within
		// batchLinger, so a burst costs a few consumer calls and checkpoint writes, not one each.
		linger := time.NewTimer(batchLinger)
	drain:
		for len(batch) < maxBatch {
			select {
			case e, ok := <-ch:
				if !ok {
					break drain
				}
				batch = append(batch, e)
			case <-linger.C:
				break drain
			case <-ctx.Done():
				break drain
			}
		}
		linger.Stop()
		newRV, err := t.handleBatch(ctx, ns, batch)
		if newRV != "" {
			*rv = newRV
			delivered = true
		}
		if err != nil {
			return delivered, err
		}
	}
}

// handleBatch turns a batch of notifications into records, emits them and saves the checkpoint.
// It returns the resource version reached.
func (t *term) handleBatch(ctx context.Context, ns string, batch []watch.Event) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	var ts []transition
	rv := ""
	var batchErr error
	for _, e := range batch {
		if e.Type == watch.Error {
			status := apierrors.FromObject(e.Object)
			if apierrors.IsResourceExpired(status) || apierrors.IsGone(status) {
				batchErr = errGone
			} else {
				batchErr = fmt.Errorf("watch: %w", status)
			}
			break
		}
		if e.Type == watch.Bookmark {
			if m, err := metaAccessor(e.Object); err == nil {
				rv = m
			}
			continue
		}
		ev, objRV, ok := toEvent(e.Object)
		if !ok {
			continue
		}
		rv = objRV
		t.tel.ReceiverKubeEventsEventsReceived.Add(ctx, 1)
		if !t.keep(&ev) {
			continue
		}
		switch e.Type {
		case watch.Added:
			ts = append(ts, t.table.observe(ev, now, true, true)...)
		case watch.Modified:
			ts = append(ts, t.table.observe(ev, now, false, true)...)
		case watch.Deleted:
			ts = append(ts, t.table.deleted(ev.UID)...)
		}
	}
	if rv == "" {
		return "", batchErr
	}
	if !t.emitAndSave(ctx, ts, ns, rv) {
		return "", ctx.Err()
	}
	return rv, batchErr
}

func metaAccessor(obj runtime.Object) (string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return "", errors.New("bookmark without metadata")
	}
	return m.GetResourceVersion(), nil
}

// keep applies the include and exclude lists.
func (t *term) keep(ev *event) bool {
	in, ex := t.cfg.Include, t.cfg.Exclude
	ok := (len(in.Reasons) == 0 || slices.Contains(in.Reasons, ev.Reason)) &&
		(len(in.Types) == 0 || slices.Contains(in.Types, ev.Type)) &&
		!slices.Contains(ex.Reasons, ev.Reason) && !slices.Contains(ex.Types, ev.Type)
	if !ok {
		t.tel.ReceiverKubeEventsEventsFiltered.Add(context.Background(), 1)
	}
	return ok
}

// emitRecords hands the log records of ts (the states series.emit selects) to the logs
// consumer, retrying refused batches with backoff, and the spans of ts (rule 9) to the span
// queue, which never waits (rule 9.7); false when ctx ended first. Called with t.mu held.
func (t *term) emitRecords(ctx context.Context, ts []transition) bool {
	if t.nextLogs != nil && !t.emitLogs(ctx, ts) {
		return false
	}
	if t.spanQ != nil {
		traces := ptrace.NewTraces()
		if n := t.spans.build(traces, ts); n > 0 {
			t.spanQ.offer(ctx, traces, n)
		}
	}
	return true
}

func (t *term) emitLogs(ctx context.Context, ts []transition) bool {
	selected := make([]transition, 0, len(ts))
	for _, tr := range ts {
		if t.emit[tr.State] {
			selected = append(selected, tr)
		}
	}
	if len(selected) == 0 {
		return true
	}
	now := t.now()
	logs := plog.NewLogs()
	t.builder.build(logs, selected, now)
	if !consume(ctx, t.cfg.Client.Backoff, t.tel, t.logger, len(selected), func(ctx context.Context) error { return t.nextLogs.ConsumeLogs(ctx, logs) }) {
		return false
	}
	for _, tr := range selected {
		t.tel.ReceiverKubeEventsRecordsEmitted.Add(ctx, 1, metric.WithAttributes(attribute.String("state", tr.State.String())))
		if !tr.Event.Last.IsZero() {
			t.tel.ReceiverKubeEventsEmitLag.Record(ctx, now.Sub(tr.Event.Last).Milliseconds())
		}
	}
	return true
}

// consume calls send until the consumer accepts (or refuses permanently: the n items are
// dropped and logged); false when ctx ended first.
func consume(ctx context.Context, bc BackoffConfig, tel *metadata.TelemetryBuilder, logger *zap.Logger, n int, send func(context.Context) error) bool {
	b := &backoff{initial: bc.InitialInterval, max: bc.MaxInterval}
	for {
		// A send under way when the term ends is finished, not abandoned: an export canceled
		// after the data was delivered would be repeated by the next term (rule 8).
		sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		err := send(sendCtx)
		cancel()
		if err == nil {
			return true
		}
		tel.ReceiverKubeEventsConsumerErrors.Add(ctx, 1)
		if consumererror.IsPermanent(err) {
			logger.Error("the next consumer refused data permanently; dropped", zap.Int("items", n), zap.Error(err))
			return true
		}
		if !sleepCtx(ctx, b.next(err)) {
			return false
		}
	}
}

// emitAndSave emits ts and then moves the checkpoint: ns at rv (rv "" keeps it) and the series
// state; it is written now if the last write is checkpoint.interval old, else by flushLoop.
func (t *term) emitAndSave(ctx context.Context, ts []transition, ns, rv string) bool {
	if !t.emitRecords(ctx, ts) {
		return false
	}
	if t.cp == nil {
		t.cp = &checkpoint{ResourceVersions: map[string]string{}}
	}
	if rv != "" {
		t.cp.ResourceVersions[ns] = rv
	}
	t.dirty = true
	t.tel.ReceiverKubeEventsSeriesEvicted.Add(ctx, t.table.evicted)
	t.table.evicted = 0
	if t.now().Sub(t.lastSave) >= t.cfg.Checkpoint.Interval {
		t.save(ctx, finishTimeout)
	}
	return true
}

// save writes the checkpoint if it is behind (rule 5.5), merging with a concurrent write and
// stopping the term when a newer term fenced it (rule 5.7). Called with t.mu held.
func (t *term) save(ctx context.Context, timeout time.Duration) {
	if t.store == nil || t.fenced || !t.dirty || t.cp == nil {
		return
	}
	rvs := make(map[string]string, len(t.cp.ResourceVersions))
	for k, v := range t.cp.ResourceVersions {
		rvs[k] = v
	}
	cp := &checkpoint{Term: t.number, Holder: t.holder, ResourceVersions: rvs, Series: t.table.snapshot()}
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	saved, err := t.store.Save(saveCtx, cp)
	switch {
	case errors.Is(err, errFenced):
		t.fenced = true
		t.tel.ReceiverKubeEventsCheckpointFenced.Add(ctx, 1)
		t.logger.Warn("a newer leader wrote the checkpoint: this term is deposed and stops", zap.Int64("term", t.number))
		t.stop()
		return
	case err != nil:
		t.tel.ReceiverKubeEventsCheckpointErrors.Add(ctx, 1)
		t.logger.Warn("saving the checkpoint failed", zap.Error(err))
		return
	}
	t.dirty, t.lastSave = false, t.now()
	t.tel.ReceiverKubeEventsCheckpointWrites.Add(ctx, 1)
	t.tel.ReceiverKubeEventsCheckpointSize.Record(ctx, int64(len(saved.encode())))
	if saved != cp {
		// merged with an older term's late write: take up what it finished or opened
		for k, p := range saved.Series {
			if p.Term < t.number {
				t.table.absorb(k, p)
			}
		}
	}
}
