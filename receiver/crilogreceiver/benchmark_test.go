// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/metadata"
)

type countingConsumer struct {
	n    atomic.Int64
	want int64
	done chan struct{}
}

func (c *countingConsumer) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *countingConsumer) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	if c.n.Add(int64(ld.LogRecordCount())) == c.want {
		close(c.done)
	}
	return nil
}

// BenchmarkReceiver reads 20 files of 5,000 CRI lines (10 % of the entries in two partial
// lines) from the page cache through the whole receiver into a counting consumer.
func BenchmarkReceiver(b *testing.B) {
	root := b.TempDir()
	const files, entries = 20, 4000
	lines := 0
	msg := `I0501 10:11:12.123456       1 controller.go:123] "Reconciled object" controller="deployment" object="default/web-7c9d8f" duration="1.2ms"`
	for f := 0; f < files; f++ {
		dir := filepath.Join(root, fmt.Sprintf("ns_pod%d_uid", f), "app")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dir, "0.log"))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(out)
		for i := 0; i < entries; i++ {
			stream := []string{"stdout", "stderr"}[i%2]
			if i%10 == 0 {
				_, _ = fmt.Fprintf(w, "2024-05-01T10:11:12.%09dZ %s P %s\n", i, stream, msg[:40])
				_, _ = fmt.Fprintf(w, "2024-05-01T10:11:12.%09dZ %s F %s\n", i, stream, msg[40:])
				lines += 2
				continue
			}
			_, _ = fmt.Fprintf(w, "2024-05-01T10:11:12.%09dZ %s F %s\n", i, stream, msg)
			lines++
		}
		// bufio.Writer keeps its first write error: Flush reports it for every Fprintf above.
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := out.Close(); err != nil {
			b.Fatal(err)
		}
	}
	cfg := testConfig(root)
	cfg.PollInterval = time.Millisecond
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c := &countingConsumer{want: files * entries, done: make(chan struct{})}
		rcv, err := newReceiver(receivertest.NewNopSettings(metadata.Type), cfg, c)
		if err != nil {
			b.Fatal(err)
		}
		if err := rcv.Start(context.Background(), hostWith(nil)); err != nil {
			b.Fatal(err)
		}
		<-c.done
		if err := rcv.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lines), "ns/line")
}
