// SPDX-License-Identifier: Apache-2.0

package queuestorageextension

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
)

// BenchmarkQueueStorageWrites compares what queue_storage and file_storage (bbolt) write per
// queued byte, and their time per item, with the storage operations exporterhelper's
// persistent queue makes for one item (collector v0.160): on Offer one batch setting its
// metadata key and the item, on Read one setting the metadata and getting the item, on OnDone
// one setting the metadata and deleting the item. The reader stays `lag` items behind the
// writer, as the senders do while a backlog is read; items are incompressible, as compressed
// queue items are; queue_storage has its default segment size. It mirrors the exporter's benchmark of file_storage alone
// (exporter/cloudwatchgroupsexporter, BenchmarkQueueStorageWrites) and reports the bytes
// passed to write calls (/proc/self/io) per queued byte. Run it with hundreds of items (-benchtime 400x).
func BenchmarkQueueStorageWrites(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/self/io")
	}
	for _, size := range []int{32 << 10, 128 << 10, 512 << 10} {
		for _, lag := range []int{2, 20} {
			for _, s := range backends(0) {
				b.Run(fmt.Sprintf("item=%dKiB/lag=%d/%s", size>>10, lag, s.name), func(b *testing.B) {
					benchQueueStorage(b, s.start, size, lag)
				})
			}
		}
	}
}

func benchQueueStorage(b *testing.B, start func(testing.TB, string) (component.ID, extension.Extension), size, lag int) {
	meta := bytes.Repeat([]byte{7}, 40) // the metadata value: indexes and dispatched items
	const metaKey = "qmv0"              // exporterhelper's key; item keys are decimal indexes
	_, ext := start(b, b.TempDir())
	defer func() { require.NoError(b, ext.Shutdown(context.Background())) }()
	ctx := context.Background()
	client, err := ext.(storage.Extension).GetClient(ctx, component.KindExporter, component.MustNewID("cloudwatch_groups"), "logs")
	require.NoError(b, err)
	defer func() { require.NoError(b, client.Close(ctx)) }()
	batch := func(op *storage.Operation) {
		require.NoError(b, client.Batch(ctx, storage.SetOperation(metaKey, meta), op))
	}
	item := make([]byte, size)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(item)
	key := strconv.Itoa
	done := func(i int) {
		get := storage.GetOperation(key(i))
		batch(get)
		if len(get.Value) != size {
			b.Fatalf("item %d: %d bytes read back", i, len(get.Value))
		}
		batch(storage.DeleteOperation(key(i)))
	}
	w0 := procWritten(b)
	b.ReportAllocs()
	b.SetBytes(int64(size))
	b.ResetTimer()
	read := 0
	for w := 0; w < b.N; w++ {
		batch(storage.SetOperation(key(w), item))
		for ; w-read >= lag; read++ {
			done(read)
		}
	}
	for ; read < b.N; read++ {
		done(read)
	}
	b.StopTimer()
	b.ReportMetric(float64(procWritten(b)-w0)/float64(b.N*size), "written/queued")
}

// procWritten is the bytes this process has passed to write calls (wchar of /proc/self/io);
// nothing else in the benchmark writes.
func procWritten(tb testing.TB) int64 {
	data, err := os.ReadFile("/proc/self/io")
	require.NoError(tb, err)
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			require.NoError(tb, err)
			return n
		}
	}
	tb.Fatal("no wchar in /proc/self/io")
	return 0
}

// BenchmarkPersistentQueue sends b.N items of about `size` bytes through exporterhelper's
// persistent queue (collector v0.160, 2 consumers, no batching) over each backend into a sink
// that counts them, and reports the time and allocations per item: the queue's whole cost
// (encoding, the storage's batches, the bookkeeping) with each storage.
func BenchmarkPersistentQueue(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		for _, s := range backends(0) {
			b.Run(fmt.Sprintf("item=%dKiB/%s", size>>10, s.name), func(b *testing.B) {
				id, ext := s.start(b, b.TempDir())
				var got atomic.Int64
				done := make(chan struct{})
				push := func(context.Context, plog.Logs) error {
					if got.Add(1) == int64(b.N) {
						close(done)
					}
					return nil
				}
				exp := startQueue(b, id, ext, push, true, configretry.NewDefaultBackOffConfig())
				ld := plog.NewLogs()
				body := make([]byte, size)
				_, _ = rand.NewChaCha8([32]byte{2}).Read(body)
				ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetEmptyBytes().FromRaw(body)
				b.ReportAllocs()
				b.SetBytes(int64(size))
				b.ResetTimer()
				for range b.N {
					require.NoError(b, exp.ConsumeLogs(context.Background(), ld))
				}
				<-done
				b.StopTimer()
				require.NoError(b, exp.Shutdown(context.Background()))
				require.NoError(b, ext.Shutdown(context.Background()))
			})
		}
	}
}
