// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/batching"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/encoding"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/routing"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/sender"
)

type cwExporter struct {
	cfg       *Config
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	router    *routing.Router
	format    encoding.Format
	prepOpts  batching.Options
	// newAPI builds the CloudWatch Logs client at start; tests replace it.
	newAPI func(context.Context, *Config) (sender.API, error)
	// sender is set at start; stopping reads it from the shutdown path.
	sender   *sender.Sender
	senderMu sync.Mutex
	now      func() time.Time
	// health follows whether batches are delivered.
	health *deliveryHealth
	// partials keeps the batcher's partial batches within half the queue (partials.go).
	partials *partialGate
	// id is the component's; known (with a persistent queue) remembers the groups that exist
	// across restarts (knowngroups.go).
	id    component.ID
	known *knownGroups
}

func newExporter(cfg *Config, set exporter.Settings) (*cwExporter, error) {
	rcfg := cfg.routingConfig()
	if rcfg.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("host name for stream names: %w (set hostname)", err)
		}
		rcfg.Hostname = h
	}
	e := &cwExporter{}
	router, err := routing.New(rcfg)
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	opts := batching.Options{MaxEventBytes: cfg.MaxEventBytes}
	if cfg.Oversize == "split" {
		opts.Oversize = batching.Split
	}
	if cfg.RetentionDays > 0 {
		opts.MaxAge = time.Duration(cfg.RetentionDays) * 24 * time.Hour
	}
	e.cfg = cfg
	e.id = set.ID
	e.logger = set.Logger
	e.telemetry = tb
	e.router = router
	e.format = encoding.Format(cfg.MessageFormat)
	e.prepOpts = opts
	e.newAPI = newCloudWatchClient
	e.now = time.Now
	e.health = &deliveryHealth{warnAfter: cfg.DeliveryWarnAfter, logger: set.Logger, tb: tb, now: time.Now}
	e.partials = newPartialGate(cfg)
	return e, nil
}

func (e *cwExporter) start(ctx context.Context, host component.Host) error {
	api, err := e.newAPI(ctx, e.cfg)
	if err != nil {
		return err
	}
	backoff := sender.Backoff{
		Initial:       e.cfg.BackOffConfig.InitialInterval,
		Max:           e.cfg.BackOffConfig.MaxInterval,
		Multiplier:    e.cfg.BackOffConfig.Multiplier,
		Randomization: e.cfg.BackOffConfig.RandomizationFactor,
	}
	if !e.cfg.BackOffConfig.Enabled {
		backoff = sender.Backoff{Disabled: true}
	}
	var stored []string
	var groupKnown func(string)
	if e.cfg.QueueConfig.HasValue() && e.cfg.QueueConfig.Get().StorageID != nil {
		k, names, err := openKnownGroups(ctx, host, *e.cfg.QueueConfig.Get().StorageID, e.id, e.logger)
		if err != nil {
			// Only costs a CreateLogStream per group at this start (design.md, section 7).
			e.logger.Warn("Cannot keep the known log groups across restarts", zap.Error(err))
		} else {
			e.known, stored, groupKnown = k, names, k.add
		}
	}
	senders := 0 // without a queue the callers' goroutines push: no fixed number
	if e.cfg.QueueConfig.HasValue() {
		senders = e.cfg.QueueConfig.Get().NumConsumers
	}
	e.senderMu.Lock()
	defer e.senderMu.Unlock()
	e.sender = sender.New(api, sender.Config{
		Settings: sender.GroupSettings{
			RetentionDays: e.cfg.RetentionDays,
			Tags:          e.cfg.Tags,
			KMSKeyID:      e.cfg.KMSKeyID,
			Class:         e.cfg.LogGroupClass,
		},
		ApplyToExisting:  e.cfg.ApplySettingsToExistingGroups,
		Backoff:          backoff,
		CreateGroupRate:  e.cfg.CreateLogGroupRate,
		CreateStreamRate: e.cfg.CreateLogStreamRate,
		GroupKnown:       groupKnown,
		Senders:          senders,
	}, &observer{tb: e.telemetry, health: e.health}, e.logger)
	e.sender.Known(stored)
	e.health.start(ctx, host)
	return nil
}

// stopRetries ends every retry wait of the sender and its settings worker. It runs first in
// shutdown, before exporterhelper stops its retry and the queue (stopRetriesFirst), and again
// (a no-op) in the exporter's own shutdown.
func (e *cwExporter) stopRetries() {
	e.health.stop()
	e.senderMu.Lock()
	s := e.sender
	e.senderMu.Unlock()
	if s != nil {
		s.Stop()
	}
}

func (e *cwExporter) shutdown(ctx context.Context) error {
	e.stopRetries()
	e.telemetry.Shutdown()
	if e.known != nil {
		return e.known.close(ctx)
	}
	return nil
}

// streamID names one destination stream.
type streamID struct{ group, stream string }

// work is one batch ready to send.
type work struct {
	id     streamID
	events []batching.Event
}

// convert routes and encodes the records of ld into a request (exporterhelper calls it in
// ConsumeLogs, before the queue): the queue then holds encoded events, not pdata.
func (e *cwExporter) convert(ctx context.Context, ld plog.Logs) (xexporterhelper.Request, error) {
	req := e.route(ctx, ld, e.now())
	e.partials.enter(req)
	return req, nil
}

// push converts and sends ld in one step (tests; the pipeline goes through the queue).
func (e *cwExporter) push(ctx context.Context, ld plog.Logs) error {
	req, _ := e.convert(ctx, ld)
	return e.pushRequest(ctx, req)
}

// pushRequest batches and sends one request. It retries single calls itself, so batches
// already delivered are never sent again; when some batches still fail it returns a
// partialFailure holding only their events, which OnError hands back for the retry.
func (e *cwExporter) pushRequest(ctx context.Context, r xexporterhelper.Request) error {
	if e.sender == nil {
		return errors.New("exporter not started")
	}
	req, ok := r.(*eventsRequest)
	if !ok {
		return consumererror.NewPermanent(fmt.Errorf("cloudwatch_groups: unexpected request type %T", r))
	}
	// A partition's batch sent by flush_timeout or at shutdown is no longer a partial one.
	req.gate.release(req)
	held := &req.origins
	// Events read back from the persistent queue waited packed; decode them for sending.
	req, decoded, err := req.unpack()
	if err != nil {
		return consumererror.NewPermanent(err)
	}
	// The push's sends hold one of the queue's consumers together (design.md, section 7).
	ctx = sender.WithSend(ctx)
	now := e.now()
	first := req.firstFailure
	if first.IsZero() {
		first = now
	}
	if m := e.cfg.BackOffConfig.MaxElapsedTime; m > 0 && e.cfg.BackOffConfig.Enabled {
		ctx = sender.WithDeadline(ctx, first.Add(m))
	}
	var batches []work
	var st batching.Stats
	for _, s := range req.streams {
		// Prepare reorders and filters in place: work on a copy, so a retry of the whole
		// request still sees every event.
		evs := make([]batching.Event, len(s.events))
		for i, ev := range s.events {
			ev.Ref = i
			evs[i] = ev
		}
		prepared, ps := batching.Prepare(evs, now, e.prepOpts)
		st.TooOld += ps.TooOld
		st.TooNew += ps.TooNew
		st.Empty += ps.Empty
		st.Truncated += ps.Truncated
		st.Split += ps.Split
		for _, b := range batching.Cut(prepared) {
			batches = append(batches, work{id: s.id, events: b})
		}
	}
	e.countPrepare(ctx, st)

	failed, err := e.send(ctx, batches)
	if len(failed) == 0 {
		// Every batch is in CloudWatch (or counted as refused): the decoded messages are
		// read no more, nor the arena chunks no other request holds messages in. Failed
		// ones are left to the garbage collector with the retry.
		releaseChunks(decoded)
		held.release(true)
		return nil
	}
	rest := &eventsRequest{firstFailure: first}
	for _, w := range failed {
		rest.append(w.id, w.events)
	}
	if e.final(now, first, err) {
		// The retry budget is spent (or retries are off): these events are dropped here,
		// counted, and the error is permanent so exporterhelper does not try again.
		e.telemetry.ExporterCloudwatchGroupsEventsRejected.Add(ctx, int64(rest.events), reasonAttr("retries_exhausted"))
		e.logger.Error("Retries exhausted; events dropped", zap.Int("events", rest.events), zap.Error(err))
		return consumererror.NewPermanent(err)
	}
	return &partialFailure{err: err, rest: rest}
}

// final reports whether a failed push is the last try of its events: retries are off, or
// retry_on_failure.max_elapsed_time has passed since the first failure. exporterhelper's own
// retry runs without a budget (see factory.go) so that this is the only place that drops.
func (e *cwExporter) final(now, first time.Time, err error) bool {
	b := e.cfg.BackOffConfig
	if !b.Enabled {
		return true
	}
	if b.MaxElapsedTime <= 0 {
		return false
	}
	return errors.Is(err, sender.ErrRetriesExhausted) || !now.Before(first.Add(b.MaxElapsedTime))
}

// route encodes every record and groups the events by destination stream, streams in order
// of first appearance. Messages are written into an arena of fixed-size chunks and shared
// from it without a copy.
func (e *cwExporter) route(ctx context.Context, ld plog.Logs, now time.Time) *eventsRequest {
	type pending struct {
		stream int // index in order
		ts     int64
		msg    string
		size   int // unescaped
	}
	n := ld.LogRecordCount()
	recs := make([]pending, 0, n)
	// The streams in order of first appearance, each with its record count; a record's stream
	// is looked up only when it differs from the previous record's.
	var order []streamID
	var counts []int
	index := map[streamID]int{}
	last, lastID := -1, streamID{}
	arena := messageArena{first: firstChunkFor(n)}
	typeAttr := e.cfg.LogType.Attribute
	nowMs := now.UnixMilli()
	fallbacks := map[string]int{}
	rewrittenGroups, rewrittenStreams := 0, 0

	var memo routing.Memo // the route of the current resource's records
	// The encoder holds the resource object of the current resource's messages, rendered
	// again only when the routed log type changes (it is written into the object).
	enc := encoding.Encoder{Format: e.format}
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes()
		memo.Reset()
		rendered, renderedType := false, ""
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				rec := lrs.At(k)
				rt := e.router.RouteMemo(&memo, res, rec.Attributes())
				for _, f := range rt.Fallbacks {
					fallbacks[f]++
				}
				if rt.GroupRewritten {
					rewrittenGroups++
				}
				if rt.StreamRewritten {
					rewrittenStreams++
				}
				if !rendered || string(rt.Type) != renderedType {
					enc.SetResource(res, encoding.Extra{Key: typeAttr, Value: string(rt.Type)})
					rendered, renderedType = true, string(rt.Type)
				}
				buf := arena.begin()
				buf, size := enc.Append(buf, rec)
				msg := arena.end(buf)
				ts := nowMs
				if t := rec.Timestamp(); t != 0 {
					ts = t.AsTime().UnixMilli()
				} else if t := rec.ObservedTimestamp(); t != 0 {
					ts = t.AsTime().UnixMilli()
				}
				if id := (streamID{rt.Group, rt.Stream}); last < 0 || id != lastID {
					s, ok := index[id]
					if !ok {
						s = len(order)
						index[id] = s
						order = append(order, id)
						counts = append(counts, 0)
					}
					last, lastID = s, id
				}
				counts[last]++
				recs = append(recs, pending{stream: last, ts: ts, msg: msg, size: size})
			}
		}
	}
	// One array holds every stream's events, each stream's run sized to its count (a stream's
	// slice is full, so anything appended later goes to a new array).
	all := make([]batching.Event, len(recs))
	runs := make([][]batching.Event, len(order))
	off := 0
	for s, c := range counts {
		runs[s] = all[off : off : off+c]
		off += c
	}
	for _, p := range recs {
		// Ref is set at send time, per stream: requests are merged and split in between.
		runs[p.stream] = append(runs[p.stream], batching.Event{Timestamp: p.ts}.WithMessage(p.msg, p.size))
	}
	req := &eventsRequest{streams: make([]streamEvents, 0, len(order)), arena: arena.chunks}
	for s, id := range order {
		req.append(id, runs[s])
	}
	if e.sender != nil {
		// New groups and streams are created while the events wait in the queue and the
		// batcher (design.md, section 7).
		for _, id := range order {
			e.sender.Ahead(id.group, id.stream)
		}
	}
	for reason, n := range fallbacks {
		e.telemetry.ExporterCloudwatchGroupsRoutingFallbacks.Add(ctx, int64(n), reasonAttr(reason))
	}
	if rewrittenGroups > 0 {
		e.telemetry.ExporterCloudwatchGroupsNamesRewritten.Add(ctx, int64(rewrittenGroups), kindGroup)
	}
	if rewrittenStreams > 0 {
		e.telemetry.ExporterCloudwatchGroupsNamesRewritten.Add(ctx, int64(rewrittenStreams), kindStream)
	}
	return req
}

func (e *cwExporter) countPrepare(ctx context.Context, st batching.Stats) {
	dropped := e.telemetry.ExporterCloudwatchGroupsEventsDropped
	for reason, n := range map[string]int{"too_old": st.TooOld, "too_new": st.TooNew, "empty": st.Empty} {
		if n > 0 {
			dropped.Add(ctx, int64(n), reasonAttr(reason))
		}
	}
	if st.Truncated > 0 {
		e.telemetry.ExporterCloudwatchGroupsEventsResized.Add(ctx, int64(st.Truncated), actionTruncated)
	}
	if st.Split > 0 {
		e.telemetry.ExporterCloudwatchGroupsEventsResized.Add(ctx, int64(st.Split), actionSplit)
	}
}

// send delivers the batches with at most MaxConcurrency calls in flight. It returns the
// batches that failed with a retryable error, and the first such error.
func (e *cwExporter) send(ctx context.Context, batches []work) ([]work, error) {
	var (
		mu       sync.Mutex
		failed   []work
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan work)
	workers := min(e.cfg.MaxConcurrency, len(batches))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range next {
				if err := e.sendBatch(ctx, w); err != nil {
					mu.Lock()
					if failed == nil {
						firstErr = err
					}
					failed = append(failed, w)
					mu.Unlock()
				}
			}
		}()
	}
	for _, w := range batches {
		next <- w
	}
	close(next)
	wg.Wait()
	return failed, firstErr
}

// sendBatch sends one batch; it returns an error only when the batch should be retried.
func (e *cwExporter) sendBatch(ctx context.Context, w work) error {
	e.sender.Prepare(w.id.group)
	input := make([]types.InputLogEvent, len(w.events))
	for i := range w.events {
		input[i] = types.InputLogEvent{Message: &w.events[i].Message, Timestamp: &w.events[i].Timestamp}
	}
	res, err := e.sender.Put(ctx, w.id.group, w.id.stream, input)
	tb := e.telemetry
	if err != nil {
		if perm := (*sender.PermanentError)(nil); errors.As(err, &perm) {
			e.health.failed(ctx, "PutLogEvents", err)
			tb.ExporterCloudwatchGroupsEventsRejected.Add(ctx, int64(len(w.events)), reasonAttr("permanent"))
			e.logger.Error("CloudWatch Logs refused a batch; its events are dropped",
				zap.String("log_group", w.id.group), zap.String("log_stream", w.id.stream),
				zap.Int("events", len(w.events)), zap.Error(err))
			return nil
		}
		if ctx.Err() != nil {
			// The request's timeout cut a call short (an endpoint that does not answer): the
			// observer saw no failed call, so the batch given up counts as one.
			e.health.failed(ctx, "PutLogEvents", err)
		}
		return err
	}
	e.health.delivered(ctx)
	rejected := 0
	for reason, n := range res.Rejected {
		rejected += n
		tb.ExporterCloudwatchGroupsEventsRejected.Add(ctx, int64(n), reasonAttr(reason))
	}
	size := batching.Bytes(w.events)
	tb.ExporterCloudwatchGroupsEventsSent.Add(ctx, int64(len(w.events)-rejected))
	tb.ExporterCloudwatchGroupsBytesSent.Add(ctx, int64(size))
	tb.ExporterCloudwatchGroupsBatches.Add(ctx, 1)
	tb.ExporterCloudwatchGroupsBatchFillRatio.Record(ctx, int64(size*100/batching.MaxBatchBytes))
	return nil
}

var (
	kindGroup       = metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", "group")))
	kindStream      = metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", "stream")))
	actionTruncated = metric.WithAttributeSet(attribute.NewSet(attribute.String("action", "truncated")))
	actionSplit     = metric.WithAttributeSet(attribute.NewSet(attribute.String("action", "split")))
)

func reasonAttr(reason string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", reason)))
}

// observer turns sender events into telemetry and tells health about failed calls.
type observer struct {
	tb     *metadata.TelemetryBuilder
	health *deliveryHealth
}

func opAttr(op string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String("operation", op)))
}

func (o *observer) Throttled(ctx context.Context, op string, err error) {
	o.tb.ExporterCloudwatchGroupsThrottles.Add(ctx, 1, opAttr(op))
	if sendPathOps[op] {
		o.health.failed(ctx, op, err)
	}
}

func (o *observer) ServerError(ctx context.Context, op string, err error) {
	o.tb.ExporterCloudwatchGroupsServerErrors.Add(ctx, 1, opAttr(op))
	if sendPathOps[op] {
		o.health.failed(ctx, op, err)
	}
}

func (o *observer) GroupCreated(ctx context.Context) {
	o.tb.ExporterCloudwatchGroupsGroupsCreated.Add(ctx, 1)
}

func (o *observer) GroupWaitCut(ctx context.Context) {
	o.tb.ExporterCloudwatchGroupsGroupWaitsCut.Add(ctx, 1)
}

func (o *observer) StreamCreated(ctx context.Context) {
	o.tb.ExporterCloudwatchGroupsStreamsCreated.Add(ctx, 1)
}

func (o *observer) SettingsApplied(ctx context.Context, ok bool) {
	outcome := "applied"
	if !ok {
		outcome = "failed"
	}
	o.tb.ExporterCloudwatchGroupsGroupSettings.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", outcome))))
}

func (o *observer) ClassMismatch(ctx context.Context) {
	o.tb.ExporterCloudwatchGroupsGroupSettings.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "class_mismatch"))))
}
