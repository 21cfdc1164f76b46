// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

// blockedTraces is a traces consumer that is down: it fails (failing) or blocks until the
// caller gives up (blocking) until released, then delivers into sink.
type blockedTraces struct {
	sink     *consumertest.TracesSink
	release  chan struct{}
	failing  bool
	attempts atomic.Int64
}

func (b *blockedTraces) consumer() consumer.Traces {
	c, _ := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		b.attempts.Add(1)
		select {
		case <-b.release:
			return b.sink.ConsumeTraces(ctx, td)
		default:
		}
		if b.failing {
			return errors.New("throttled")
		}
		select {
		case <-b.release:
			return b.sink.ConsumeTraces(ctx, td)
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	return c
}

func oneSpan() ptrace.Traces {
	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("s")
	return td
}

// TestSpanQueueNeverBlocks: with the traces consumer blocked or failing, offering spans never
// waits; the queue holds at most its capacity, the rest is counted dropped; after recovery the
// queued spans arrive; every span is either delivered or counted.
func TestSpanQueueNeverBlocks(t *testing.T) {
	for _, failing := range []bool{false, true} {
		t.Run(map[bool]string{false: "blocking", true: "failing"}[failing], func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			set := receivertest.NewNopSettings(metadata.Type)
			set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
			require.NoError(t, err)
			down := &blockedTraces{sink: &consumertest.TracesSink{}, release: make(chan struct{}), failing: failing}
			q := newSpanQueue(down.consumer(), 5, BackoffConfig{InitialInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond}, tel, zap.NewNop())
			offered := make(chan struct{})
			go func() {
				defer close(offered)
				for i := 0; i < 100; i++ {
					q.offer(context.Background(), oneSpan(), 1)
				}
			}()
			select {
			case <-offered:
			case <-time.After(10 * time.Second):
				t.Fatal("offer waited for the traces consumer")
			}
			require.Eventually(t, func() bool { return down.attempts.Load() > 0 }, 10*time.Second, 5*time.Millisecond)
			assert.LessOrEqual(t, q.len(), 5)
			dropped := counter(t, reader, "otelcol_receiver_kube_events_spans_dropped")
			assert.Equal(t, int64(100-q.len()), dropped)
			close(down.release)
			require.Eventually(t, func() bool { return down.sink.SpanCount() == 100-int(dropped) }, 10*time.Second, 5*time.Millisecond)
			q.shutdown(context.Background())
			assert.Equal(t, int64(100), counter(t, reader, "otelcol_receiver_kube_events_spans_dropped")+
				counter(t, reader, "otelcol_receiver_kube_events_spans_emitted"))
		})
	}
}

// TestSpanQueueShutdownWhileBlocked: spans still queued when the shutdown deadline passes are
// counted dropped, and shutdown returns.
func TestSpanQueueShutdownWhileBlocked(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	set := receivertest.NewNopSettings(metadata.Type)
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	require.NoError(t, err)
	down := &blockedTraces{sink: &consumertest.TracesSink{}, release: make(chan struct{})}
	q := newSpanQueue(down.consumer(), 10, BackoffConfig{InitialInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond}, tel, zap.NewNop())
	for i := 0; i < 4; i++ {
		q.offer(context.Background(), oneSpan(), 1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	q.shutdown(ctx)
	assert.Equal(t, int64(4), counter(t, reader, "otelcol_receiver_kube_events_spans_dropped"))
	q.offer(context.Background(), oneSpan(), 1)
	assert.Equal(t, int64(5), counter(t, reader, "otelcol_receiver_kube_events_spans_dropped"), "closed: dropped")
	assert.Zero(t, down.sink.SpanCount())
}

// TestEventsFlowWhileTracesDown runs the receiver against the API server with its traces
// consumer down (blocked: an X-Ray outage as the exporter without a queue sees it) while
// Events keep coming: every Event record arrives and the checkpoint moves as if there were no
// traces pipeline; the spans that fit wait in the queue and arrive after recovery, the others
// are counted dropped.
func TestEventsFlowWhileTracesDown(t *testing.T) {
	cluster, client := apiServer(t)
	ctx := context.Background()
	storeID, mem, host := memHost(nil)
	cfg := testReceiverConfig(cluster.Kubeconfig, &storeID)
	cfg.Spans.QueueSize = 10
	cfg.Checkpoint.Interval = 100 * time.Millisecond
	reader := sdkmetric.NewManualReader()
	set := receivertest.NewNopSettings(metadata.Type)
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	logSink := &consumertest.LogsSink{}
	down := &blockedTraces{sink: &consumertest.TracesSink{}, release: make(chan struct{})}
	lr := startLogsAndTraces(t, set, cfg, host, logSink, down.consumer())
	waitCheckpoint(t, mem)
	got := seen{logSink}

	const rounds, perRound = 5, 20
	for i := 0; i < rounds; i++ {
		before, _ := memClient{mem}.Get(ctx, checkpointKey)
		createEvents(t, client, "Flow", perRound)
		require.Eventually(t, func() bool { return got.counts()["Flow singleton"] == (i+1)*perRound }, 30*time.Second, 20*time.Millisecond,
			"round %d: records wait for the traces pipeline", i)
		require.Eventually(t, func() bool {
			after, _ := memClient{mem}.Get(ctx, checkpointKey)
			return string(after) != string(before)
		}, 30*time.Second, 20*time.Millisecond, "round %d: the checkpoint waits for the traces pipeline", i)
	}
	require.Positive(t, down.attempts.Load(), "the traces consumer was called")
	close(down.release) // the outage ends
	// Every singleton record has a span, the API server's own Events' too (seen.all). The last
	// batch's spans are offered just after its records: read both each time.
	offered := func() int64 {
		n := int64(0)
		for _, lr := range got.all() {
			if str(lr, attr.EventSeriesState) == "singleton" {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool {
		return int64(down.sink.SpanCount())+counter(t, reader, "otelcol_receiver_kube_events_spans_dropped") == offered()
	}, 30*time.Second, 20*time.Millisecond, "every span delivered after recovery or counted dropped")
	assert.GreaterOrEqual(t, counter(t, reader, "otelcol_receiver_kube_events_spans_dropped"), int64(rounds*perRound-10-perRound))
	require.NoError(t, lr.Shutdown(ctx))
}

// startLogsAndTraces creates and starts the receiver for a logs and a traces pipeline (one
// shared receiver); shutting the logs one down stops it.
func startLogsAndTraces(t *testing.T, set receiver.Settings, cfg *Config, host component.Host, logs consumer.Logs, traces consumer.Traces) receiver.Logs {
	t.Helper()
	ctx := context.Background()
	f := NewFactory()
	lr, err := f.CreateLogs(ctx, set, cfg, logs)
	require.NoError(t, err)
	tr, err := f.CreateTraces(ctx, set, cfg, traces)
	require.NoError(t, err)
	require.NoError(t, lr.Start(ctx, host))
	require.NoError(t, tr.Start(ctx, host))
	return lr
}
