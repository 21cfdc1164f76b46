// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
)

// steppedConsumer hands each batch to the test and returns only when the test lets it go: a
// queue that blocks when full (block_on_overflow) and frees room one send at a time.
type steppedConsumer struct {
	entered chan int      // the batch's record count, on entry
	proceed chan struct{} // one receive per batch
}

func (c *steppedConsumer) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *steppedConsumer) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	select {
	case c.entered <- ld.LogRecordCount():
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-c.proceed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestBackpressurePausesReadingAndResumesAtOnce: a backlog read through a consumer that blocks
// (the shipped queue when full) holds at most one turn's read beyond what the consumer took;
// reading pauses while the consumer blocks, and the next batch follows the consumer's return
// at once. The poll interval and the retry backoff are an hour, so a resume that waited for a
// timer or a poll would fail the test.
func TestBackpressurePausesReadingAndResumesAtOnce(t *testing.T) {
	root := t.TempDir()
	const files, lines = 3, 400
	total := 0
	for f := range files {
		p := newPodLog(t, root, "ns", fmt.Sprintf("backlog-%d", f), "app", 0)
		for i := range lines {
			p.write("stdout", fmt.Sprintf("backlog line %d of file %d, padded to about a hundred bytes of content", i, f), 0)
			total++
		}
	}
	cfg := testConfig(root)
	cfg.PollInterval = time.Hour
	cfg.RetryOnFailure = RetryConfig{InitialInterval: time.Hour, MaxInterval: time.Hour}
	cfg.MaxBytesPerPoll = 4096
	c := &steppedConsumer{entered: make(chan int), proceed: make(chan struct{})}
	_, tel := startReceiver(t, cfg, c, nil)

	const readLimit = 4096 + 512 // one turn's read, and the line it ends in
	delivered, batches := 0, 0
	for delivered < total {
		var n int
		select {
		case n = <-c.entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("no batch within 10 s of the consumer's return (after %d of %d records, %d batches): reading waited for a timer or a poll", delivered, total, batches)
		}
		batches++
		// The consumer blocks: what was read is what it was handed, and at most one turn
		// of the next file is read ahead of it.
		read := metricSum(t, tel, "otelcol_receiver_cri_log_bytes_read")
		require.LessOrEqual(t, read, int64(batches+1)*readLimit, "bytes read while the consumer blocks (batch %d)", batches)
		delivered += n
		c.proceed <- struct{}{}
	}
	require.Equal(t, total, delivered)
	require.Greater(t, batches, files*2, "the backlog took several turns per file")
	require.Zero(t, metricSum(t, tel, "otelcol_receiver_cri_log_backpressure_waits"), "a blocking consumer is not a refusal")
}
