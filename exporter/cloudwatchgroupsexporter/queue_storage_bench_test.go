// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// BenchmarkQueueStorageWrites measures what the persistent queue in file_storage (bbolt)
// writes per queued byte, with the storage operations exporterhelper's persistent queue
// makes for one item (collector v0.160): on Offer one batch setting its metadata key and the
// item, on Read one setting the metadata and getting the item, on OnDone one setting the
// metadata and deleting the item. The reader stays `lag` items behind the writer, as the
// senders do while a backlog is read. Items are incompressible, as compressed queue items are.
//
// It reports the bytes written to the queue file (write calls, /proc/self/io) per queued byte
// and the CPU per queued MiB. The point is the dependence on the item size: a bbolt leaf holds
// at least two values and every transaction rewrites each leaf it touches whole, so the bytes
// written grow with the bytes queued, not with the number of items; fewer, larger items do not
// cut the cost (testbed/BENCHMARKS.md, "The node agent against Fluent Bit"). Run it with
// hundreds of items (-benchtime 400x): with a few the tree stays small and the ratio lower.
func BenchmarkQueueStorageWrites(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/self/io")
	}
	for _, size := range []int{32 << 10, 128 << 10, 512 << 10} {
		for _, lag := range []int{2, 20} {
			b.Run(fmt.Sprintf("item=%dKiB/lag=%d", size>>10, lag), func(b *testing.B) {
				benchQueueStorage(b, size, lag, false)
			})
		}
	}
	// The metadata key kept apart from the items (here in a file of its own; exporterhelper
	// keeps both in one bucket): what its leaf costs the items next to it.
	b.Run("item=128KiB/lag=20/metadata-apart", func(b *testing.B) {
		benchQueueStorage(b, 128<<10, 20, true)
	})
}

func benchQueueStorage(b *testing.B, size, lag int, metaApart bool) {
	meta := bytes.Repeat([]byte{7}, 40) // the metadata value: indexes and dispatched items
	const metaKey = "qmv0"              // exporterhelper's key; item keys are decimal indexes
	_, ext := startFileStorage(b, b.TempDir())
	defer func() { require.NoError(b, ext.Shutdown(context.Background())) }()
	ctx := context.Background()
	open := func(name string) storage.Client {
		c, err := ext.(storage.Extension).GetClient(ctx, component.KindExporter, component.NewIDWithName(metadata.Type, name), "logs")
		require.NoError(b, err)
		return c
	}
	client, metaClient := open("bench"), storage.Client(nil)
	defer func() { require.NoError(b, client.Close(ctx)) }()
	if metaApart {
		metaClient = open("bench-metadata")
		defer func() { require.NoError(b, metaClient.Close(ctx)) }()
	}
	// batch makes one storage batch of the metadata's set and op (two when kept apart).
	batch := func(op *storage.Operation) {
		if metaClient == nil {
			require.NoError(b, client.Batch(ctx, storage.SetOperation(metaKey, meta), op))
			return
		}
		require.NoError(b, metaClient.Set(ctx, metaKey, meta))
		require.NoError(b, client.Batch(ctx, op))
	}

	item := make([]byte, size)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(item)
	key := strconv.Itoa
	done := func(i int) {
		batch(storage.GetOperation(key(i)))
		batch(storage.DeleteOperation(key(i)))
	}
	w0 := procWritten(b)
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
