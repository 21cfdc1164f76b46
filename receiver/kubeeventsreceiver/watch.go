// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objevents"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/tracesource"
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

// fetchTimeout bounds a trace-context source's on-demand read of one Event's object and its
// owners (tracesource.Fetcher): the watch goroutine waits at most this long per new object.
const fetchTimeout = 5 * time.Second

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
	// hub receives every Event this term sees (publish.go); nil without one.
	hub  objevents.Publisher
	stop context.CancelFunc

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
	var objectContext func(objref.Ref) (objContext, bool)
	if src := r.traceContext; src != nil {
		t.hub, _ = src.(objevents.Publisher)
		lookup := src.SpanContextForObject
		if f, ok := src.(tracesource.Fetcher); ok { // a source that fetches on demand (design.md rule 9.6)
			lookup = func(ctx context.Context, apiVersion, kind, namespace, name, uid string) (trace.SpanContext, bool, bool) {
				ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
				defer cancel()
				return f.FetchSpanContextForObject(ctx, apiVersion, kind, namespace, name, uid)
			}
		}
		objectContext = func(ref objref.Ref) (objContext, bool) {
			sc, link, ok := lookup(context.Background(), ref.APIVersion, ref.Kind, ref.Namespace, ref.Name, ref.UID)
			return objContext{sc: sc, link: link}, ok && sc.HasTraceID() && sc.HasSpanID()
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
		clusterName: r.cfg.ClusterName, mode: r.cfg.Spans.Mode, sampling: r.cfg.Spans.Sampling,
		objectContext: objectContext, putRef: putObjectRef,
		unsampled: func(reason string) {
			t.tel.ReceiverKubeEventsSpansUnsampled.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", reason)))
		},
	}
	if objectContext != nil {
		// a series' context is the one its object had when it began (design.md rule 9.6)
		t.table.capture = func(ev *event) objContext {
			c, ok := objectContext(canonicalRef(ev.Regarding))
			if !ok {
				return objContext{}
			}
			return c
		}
	}
	return t
}

// run loads the checkpoint, then runs one watch loop per namespace and the silence sweep until
// ctx ends.
func (t *term) run(ctx context.Context) {
	ctx, t.stop = context.WithCancel(ctx)
	defer t.stop()
	if t.hub != nil { // the hub's subscribers follow this term (objevents rule 1)
		t.hub.PublishLeading(true)
		defer t.hub.PublishLeading(false)
	}
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
