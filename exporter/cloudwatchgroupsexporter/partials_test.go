// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/batching"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/sender"
)

// pacedSink is a CloudWatch Logs that stores events at a fixed rate of CloudWatch bytes per
// second, whatever the size of the calls: a run is as fast as the sink when the exporter keeps
// it busy.
type pacedSink struct {
	bytesPerSecond float64
	mu             sync.Mutex
	free           time.Time // when the calls accepted so far are stored
	events, calls  atomic.Int64
}

func (p *pacedSink) PutLogEvents(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput, _ ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutLogEventsOutput, error) {
	n := 0
	for _, ev := range in.LogEvents {
		n += len(aws.ToString(ev.Message)) + batching.EventOverhead
	}
	p.mu.Lock()
	now := time.Now()
	if p.free.Before(now) {
		p.free = now
	}
	p.free = p.free.Add(time.Duration(float64(n) / p.bytesPerSecond * float64(time.Second)))
	until := p.free
	p.mu.Unlock()
	// The sink's own pace, not a wait for a condition of the test.
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.events.Add(int64(len(in.LogEvents)))
	p.calls.Add(1)
	return &cloudwatchlogs.PutLogEventsOutput{}, nil
}

func (*pacedSink) CreateLogGroup(context.Context, *cloudwatchlogs.CreateLogGroupInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogGroupOutput, error) {
	return &cloudwatchlogs.CreateLogGroupOutput{}, nil
}

func (*pacedSink) CreateLogStream(context.Context, *cloudwatchlogs.CreateLogStreamInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogStreamOutput, error) {
	return &cloudwatchlogs.CreateLogStreamOutput{}, nil
}

func (*pacedSink) DescribeLogGroups(context.Context, *cloudwatchlogs.DescribeLogGroupsInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.DescribeLogGroupsOutput, error) {
	return &cloudwatchlogs.DescribeLogGroupsOutput{}, nil
}

func (*pacedSink) PutRetentionPolicy(context.Context, *cloudwatchlogs.PutRetentionPolicyInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutRetentionPolicyOutput, error) {
	return &cloudwatchlogs.PutRetentionPolicyOutput{}, nil
}

func (*pacedSink) AssociateKmsKey(context.Context, *cloudwatchlogs.AssociateKmsKeyInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.AssociateKmsKeyOutput, error) {
	return &cloudwatchlogs.AssociateKmsKeyOutput{}, nil
}

func (*pacedSink) TagResource(context.Context, *cloudwatchlogs.TagResourceInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.TagResourceOutput, error) {
	return &cloudwatchlogs.TagResourceOutput{}, nil
}

func (*pacedSink) ListTagsForResource(context.Context, *cloudwatchlogs.ListTagsForResourceInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.ListTagsForResourceOutput, error) {
	return &cloudwatchlogs.ListTagsForResourceOutput{}, nil
}

// backlogChunk is one read of one container log file: records of about 1 KiB.
// backlogQueue sets the sending queue of a backlog test: queueSize bytes, 2 senders, batches
// of exactly batch bytes, and a flush timeout (a minute) that no run may wait for.
func backlogQueue(cfg *Config, queueSize int64, batch int64) *exporterhelper.QueueBatchConfig {
	q := cfg.QueueConfig.Get()
	q.Sizer = exporterhelper.RequestSizerTypeBytes
	q.QueueSize = queueSize
	q.NumConsumers = 2
	b := q.Batch.Get()
	b.MinSize, b.MaxSize = batch, batch
	b.FlushTimeout = time.Minute
	return q
}

func backlogChunk(stream, round, records int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	a := rl.Resource().Attributes()
	a.PutStr("k8s.namespace.name", "shop")
	a.PutStr("k8s.pod.name", fmt.Sprintf("web-%d", stream))
	a.PutStr("k8s.container.name", "web")
	a.PutStr("log.file.path", fmt.Sprintf("/var/log/pods/shop_web-%d_uid-%d/web/0.log", stream, stream))
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	pad := strings.Repeat("x", 900)
	now := time.Now()
	for i := range records {
		r := lrs.AppendEmpty()
		r.SetTimestamp(pcommon.NewTimestampFromTime(now))
		r.Body().SetStr(fmt.Sprintf("round %d line %d %s", round, i, pad))
	}
	return ld
}

// TestBoundedQueueKeepsPace catches up a backlog of many streams, read in turns as cri_log
// reads a node's files, through a queue of a quarter of the streams' partial batches, and
// through an unbounded one. A run ends when every event is stored or waits in a partition
// (shutdown sends those, in both runs alike). The small queue may cost at most 1.5 times the
// unbounded run's time; waiting for flush_timeout (a minute here) fails the producer's
// deadline instead.
//
// "quarter batch": reads of a quarter of a batch. Without the partial gate the small queue
// fills with partial batches and the producer blocks.
//
// "just over a batch": every read is a little more than a batch, so every stream's partial
// batch is a small tail of one read, while the queue keeps that whole read until the tail is
// sent. A gate counting the tails' own size let them fill the queue.
func TestBoundedQueueKeepsPace(t *testing.T) {
	for _, tc := range []struct {
		name            string
		rounds, records int
	}{
		{"quarter batch", 8, 64},      // about 64 KiB per read
		{"just over a batch", 3, 225}, // a little more than 256 KiB per read
	} {
		t.Run(tc.name, func(t *testing.T) {
			boundedQueueKeepsPace(t, tc.rounds, tc.records)
		})
	}
}

func boundedQueueKeepsPace(t *testing.T, rounds, records int) {
	const (
		streams = 32
		batch   = 256 << 10
		small   = 2 << 20 // a quarter of the streams' partial batches (32 x 256 KiB)
		rate    = 8 << 20 // bytes per second
	)
	run := func(t *testing.T, queueSize int64, persistent bool) (time.Duration, int64) {
		t.Helper()
		awsEnv(t)
		cfg := NewFactory().CreateDefaultConfig().(*Config)
		cfg.Region = "us-east-1"
		cfg.Hostname = "node-1"
		q := backlogQueue(cfg, queueSize, batch)
		host := componenttest.NewNopHost()
		var stopStorage func()
		if persistent {
			fsID, ext := startFileStorage(t, t.TempDir())
			q.StorageID = &fsID
			host = storageHost{exts: map[component.ID]component.Component{fsID: ext}}
			stopStorage = func() { require.NoError(t, ext.Shutdown(context.Background())) }
		}
		sink := &pacedSink{bytesPerSecond: rate}
		set := exportertest.NewNopSettings(metadata.Type)
		e, err := newExporter(cfg, set)
		require.NoError(t, err)
		e.newAPI = func(context.Context, *Config) (sender.API, error) { return sink, nil }
		exp, err := wrapExporter(context.Background(), set, cfg, e)
		require.NoError(t, err)
		require.NoError(t, exp.Start(context.Background(), host))

		chunks := make([]plog.Logs, 0, streams*rounds)
		for r := range rounds {
			for s := range streams {
				chunks = append(chunks, backlogChunk(s, r, records))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		start := time.Now()
		for _, ld := range chunks {
			require.NoError(t, exp.ConsumeLogs(ctx, ld), "the producer waited for flush_timeout")
		}
		total := int64(streams * rounds * records)
		require.Eventually(t, func() bool {
			return sink.events.Load()+e.partials.heldEvents.Load() == total
		}, 30*time.Second, 5*time.Millisecond, "events neither stored nor waiting in a partition")
		took := time.Since(start)
		require.NoError(t, exp.Shutdown(context.Background())) // sends the last partial batches
		if stopStorage != nil {
			stopStorage()
		}
		require.Equal(t, total, sink.events.Load())
		return took, sink.calls.Load()
	}
	for _, persistent := range []bool{false, true} {
		t.Run(fmt.Sprintf("persistent=%v", persistent), func(t *testing.T) {
			free, freeCalls := run(t, 1<<30, persistent)
			bounded, boundedCalls := run(t, small, persistent)
			t.Logf("unbounded %v (%d calls), queue of %d KiB %v (%d calls)", free, freeCalls, small>>10, bounded, boundedCalls)
			assert.LessOrEqual(t, bounded.Seconds(), 1.5*free.Seconds(), "a small queue slowed the backlog down")
		})
	}
}

// TestPartialGateKeepsBudget walks the gate through what exporterhelper's batcher does with
// the pieces of MergeSplit: the last piece below min_size is kept, counted until it is merged
// into or sent; past the budget a piece is marked ready and reports a full batch.
func TestPartialGateKeepsBudget(t *testing.T) {
	g := &partialGate{budget: 1000, queueSizer: exporterhelper.RequestSizerTypeBytes, minSize: 1000}
	piece := func(stream string, size int) *eventsRequest {
		r := &eventsRequest{gate: g}
		msg := strings.Repeat("m", size-batching.EventOverhead)
		r.append(streamID{group: "g", stream: stream}, []batching.Event{batching.Event{}.WithMessage(msg, len(msg))})
		return r
	}
	split := func(r *eventsRequest, other *eventsRequest) *eventsRequest {
		var o xexporterhelper.Request
		if other != nil {
			o = other
		}
		out, err := r.MergeSplit(context.Background(), 4096, exporterhelper.RequestSizerTypeBytes, o)
		require.NoError(t, err)
		return out[len(out)-1].(*eventsRequest)
	}
	a := split(piece("a", 400), nil)
	b := split(piece("b", 400), nil)
	assert.Equal(t, int64(800), g.held.Load(), "two partial batches kept")
	assert.Equal(t, int64(2), g.heldEvents.Load())
	assert.Equal(t, 400, a.BytesSize())

	c := split(piece("c", 400), nil)
	assert.True(t, c.ready, "a third would pass the budget")
	assert.Equal(t, 1000, c.BytesSize(), "a ready piece reports min_size, so the batcher sends it")
	assert.Equal(t, int64(800), g.held.Load())

	a = split(a, piece("a", 300))
	assert.True(t, a.ready, "a's merge (700) and b (400) would pass the budget")
	assert.Equal(t, 700, a.bytes)
	assert.Equal(t, int64(400), g.held.Load(), "a merged into is no longer counted")

	small := split(piece("d", 200), nil)
	assert.False(t, small.ready)
	assert.Equal(t, int64(600), g.held.Load())

	full := split(piece("e", 1200), nil)
	assert.False(t, full.ready, "a piece of min_size is sent anyway: nothing to count")
	assert.Equal(t, int64(600), g.held.Load())

	// Sent by flush_timeout or at shutdown.
	g.release(b)
	g.release(small)
	g.release(small) // once only
	assert.Equal(t, int64(0), g.held.Load())
	assert.Equal(t, int64(0), g.heldEvents.Load())
}

// TestPartialGateCountsWholeItems: a partial batch that holds the last events of a queue item
// is counted with the whole item, which the queue keeps until the batch is sent; pieces of
// several items count each item once.
func TestPartialGateCountsWholeItems(t *testing.T) {
	g := &partialGate{budget: 3000, queueSizer: exporterhelper.RequestSizerTypeBytes, minSize: 1000}
	item := func(stream string, sizes ...int) *eventsRequest {
		r := &eventsRequest{}
		evs := make([]batching.Event, 0, len(sizes))
		for _, size := range sizes {
			msg := strings.Repeat("m", size-batching.EventOverhead)
			evs = append(evs, batching.Event{}.WithMessage(msg, len(msg)))
		}
		r.append(streamID{group: "g", stream: stream}, evs)
		g.enter(r)
		return r
	}
	split := func(r, other *eventsRequest) []xexporterhelper.Request {
		var o xexporterhelper.Request
		if other != nil {
			o = other
		}
		out, err := r.MergeSplit(context.Background(), 1000, exporterhelper.RequestSizerTypeBytes, o)
		require.NoError(t, err)
		return out
	}

	// 1100 bytes: a full batch of 1000 and a tail of 100, which keeps the whole item queued.
	out := split(item("a", 500, 500, 100), nil)
	require.Len(t, out, 2)
	tail := out[1].(*eventsRequest)
	assert.Equal(t, 100, tail.bytes)
	assert.False(t, tail.ready)
	assert.Equal(t, int64(1100), g.held.Load(), "the tail holds its whole item in the queue")

	// The next item of the stream merges into the tail: 100 + 1300 = 1400, a batch of 1000
	// (the tail, 800 of the item) and a tail of 400 holding the second item only.
	out = split(tail, item("a", 800, 400, 100))
	require.Len(t, out, 2)
	tail = out[1].(*eventsRequest)
	assert.Equal(t, 500, tail.bytes)
	assert.Equal(t, int64(1300), g.held.Load(), "the first item left with the sent batch")
	require.Len(t, tail.origins.runs, 1)
	assert.Equal(t, 2, tail.origins.runs[0].n)

	// Two items merged without a split: each counted once, whole.
	b := split(item("b", 300), nil)[0].(*eventsRequest)
	b = split(b, item("b", 200))[0].(*eventsRequest)
	assert.Equal(t, int64(1800), g.held.Load())

	// Past the budget (1800 + 1400 > 3000): the tail goes at once and is not counted.
	out = split(item("c", 900, 100, 400), nil)
	c := out[len(out)-1].(*eventsRequest)
	assert.True(t, c.ready, "a tail holding an item past the budget is sent at once")
	assert.Equal(t, int64(1800), g.held.Load())

	g.release(tail)
	g.release(b)
	assert.Equal(t, int64(0), g.held.Load())
	assert.Equal(t, int64(0), g.heldEvents.Load())
}
