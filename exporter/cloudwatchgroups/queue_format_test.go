// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroups

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.uber.org/zap"
	zapobserver "go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/batching"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/metadata"
)

// formatRequest is the fixed request of the queue format files in testdata, with its messages
// as events carry them (escaped; the earlier versions stored them unescaped).
func formatRequest() *eventsRequest {
	r := &eventsRequest{}
	r.append(streamID{"k8s.namespace/shop", "node-1/var/log/pods/shop_web_0a1b/web/0.log"}, []batching.Event{
		{Timestamp: 1_764_000_000_000, Message: `{\"body\":\"GET /cart 200\",\"resource\":{\"k8s.namespace.name\":\"shop\"}}`, Unescaped: 65},
		{Timestamp: 1_764_000_000_001, Message: `{\"body\":\"GET /cart 200\",\"resource\":{\"k8s.namespace.name\":\"shop\"}}`, Unescaped: 65},
		{Timestamp: -5, Message: "ü"},
	})
	r.append(streamID{"k8s.audit", "node-1/var/log/kube-apiserver/audit.log"}, []batching.Event{
		{Timestamp: 1_764_000_000_002, Message: `{\"kind\":\"Event\"}`, Unescaped: 16},
	})
	return r
}

// eventsOf lists every event of r as "stream|timestamp|size|message", in order.
func eventsOf(r *eventsRequest) []string {
	var out []string
	for _, s := range unpacked(r).streams {
		for _, ev := range s.events {
			out = append(out, fmt.Sprintf("%s|%d|%d|%s", s.id.stream, ev.Timestamp, ev.MessageSize(), ev.Message))
		}
	}
	return out
}

// TestQueueFormatVersions pins the persistent queue's format: the current version byte's file
// in testdata is exactly what Marshal writes today, so changing the format without a new
// version byte (and a new file) fails here; every earlier version's file still decodes.
// Regenerate the current file only together with a new queueMagic version.
func TestQueueFormatVersions(t *testing.T) {
	want := formatRequest()
	current := filepath.Join("testdata", "queue", "v4.bin")
	if os.Getenv("CW_WRITE_QUEUE_FORMAT") == "1" {
		require.NoError(t, os.WriteFile(current, marshalRequest(want), 0o600))
	}
	got, err := os.ReadFile(current)
	require.NoError(t, err)
	assert.Equal(t, got, marshalRequest(want), "the queue format changed: give it a new version byte (queueMagic) and a new file")
	assert.Equal(t, byte(4), queueMagic[len(queueMagic)-1])

	for _, name := range []string{"v1-plain.bin", "v1-s2.bin", "v2.bin", "v3.bin", "v4.bin"} {
		b, err := os.ReadFile(filepath.Join("testdata", "queue", name))
		require.NoError(t, err)
		_, back, err := queueEncoding{}.Unmarshal(b)
		require.NoError(t, err, name)
		assert.Equal(t, eventsOf(want), eventsOf(back.(*eventsRequest)), name)
	}
}

// withSum returns a version 4 item of mode and body (everything after the sum), with its sum.
func withSum(mode byte, body []byte) []byte {
	item := append(append([]byte(nil), queueMagic...), mode, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(item[len(item)-4:], crc32.Checksum(body, castagnoli))
	return append(item, body...)
}

// v4Parts splits a version 4 item into its mode, index (with its mode byte) and payload.
func v4Parts(t *testing.T, item []byte) (byte, []byte, []byte) {
	t.Helper()
	body := item[len(queueMagic)+5:]
	n, k := binary.Uvarint(body[1:])
	k++
	require.Positive(t, k)
	return item[len(queueMagic)], append([]byte{body[0]}, body[k:k+int(n)]...), body[k+int(n):]
}

// TestQueueCorruptLengthIsBounded: a queued item whose length field is corrupt (here the S2
// header claiming 1 GiB) is rejected without allocating what it claims, even when its sum
// is right (a bug that wrote it, not the disk).
func TestQueueCorruptLengthIsBounded(t *testing.T) {
	mode, index, block := v4Parts(t, marshalRequest(formatRequest()))
	require.Equal(t, byte(queueS2), mode)
	_, n := binary.Uvarint(block)
	require.Positive(t, n)
	// The S2 block with its decoded-length header replaced by 1 GiB.
	corrupt := append(binary.AppendUvarint(nil, 1<<30), block[n:]...)
	body := append(append([]byte{index[0]}, binary.AppendUvarint(nil, uint64(len(index)-1))...), index[1:]...)
	for _, item := range [][]byte{
		withSum(queueS2, append(body, corrupt...)),
		append([]byte("cwg\x01"), corrupt...),
		append([]byte("cwg\x03s"), corrupt...),
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _, err := queueEncoding{}.Unmarshal(item)
		runtime.ReadMemStats(&after)
		require.Error(t, err)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "allocated for a corrupt length")
	}
}

// TestQueueSumCatchesEveryFlippedBit: a bit flipped anywhere after the magic (a disk error) is
// an error, never a request with other events.
func TestQueueSumCatchesEveryFlippedBit(t *testing.T) {
	good := marshalRequest(formatRequest())
	for i := len(queueMagic); i < len(good); i++ {
		for bit := range 8 {
			item := append([]byte(nil), good...)
			item[i] ^= 1 << bit
			_, _, err := queueEncoding{}.Unmarshal(item)
			require.Error(t, err, "byte %d bit %d", i, bit)
		}
	}
}

// TestQueueRoundTripsMessagesLongerThanTheIndex: sizes are checked against their messages,
// not against the index they are written in (an item of one long message has a short index).
func TestQueueRoundTripsMessagesLongerThanTheIndex(t *testing.T) {
	msg := `{\"body\":\"` + strings.Repeat("x", 2000) + `\"}`
	for _, r := range []*eventsRequest{
		reqWith(streamID{"g", "s"}, batching.Event{Timestamp: 1, Message: msg, Unescaped: len(msg) - 4}),
		reqWith(streamID{"g", "s"}, batching.Event{Timestamp: 1, Message: strings.Repeat("y", 5000)}),
	} {
		_, back, err := queueEncoding{}.Unmarshal(marshalRequest(r))
		require.NoError(t, err)
		assert.Equal(t, eventsOf(r), eventsOf(back.(*eventsRequest)))
	}
}

func reqWith(id streamID, evs ...batching.Event) *eventsRequest {
	r := &eventsRequest{}
	r.append(id, evs)
	return r
}

// TestQueueRoundTripsBursts: a burst of like events (one millisecond, one short line) makes an
// index and messages that compress thousands of times; both are stored so that the decoder's
// bound still reads them.
func TestQueueRoundTripsBursts(t *testing.T) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		evs := make([]batching.Event, n)
		for i := range evs {
			evs[i] = batching.Event{Timestamp: 1_764_000_000_000, Message: "x"}
		}
		r := reqWith(streamID{"g", "s"}, evs...)
		_, back, err := queueEncoding{}.Unmarshal(marshalRequest(r))
		require.NoError(t, err, "%d events", n)
		assert.Equal(t, eventsOf(r), eventsOf(back.(*eventsRequest)))
	}
}

// TestQueueReadBackKeepsMessagesCompressed: reading an item back parses its index only; its
// messages stay in the stored block until they are sent.
func TestQueueReadBackKeepsMessagesCompressed(t *testing.T) {
	item := marshalRequest(formatRequest())
	_, back, err := queueEncoding{}.Unmarshal(item)
	require.NoError(t, err)
	r := back.(*eventsRequest)
	_, _, block := v4Parts(t, item)
	for _, s := range r.streams {
		require.NotNil(t, s.packed, s.id.stream)
		assert.Equal(t, unsafe.SliceData(block), unsafe.SliceData(s.packed.block), "the stored block itself")
		for _, ev := range s.events {
			assert.Empty(t, ev.Message)
		}
	}
	assert.Equal(t, eventsOf(formatRequest()), eventsOf(r))
	assert.Equal(t, formatRequest().BytesSize(), r.BytesSize())
}

// TestQueueCompressionRatioIsBounded: a request that compresses better than maxQueueRatio is
// stored uncompressed, so the decoder's bound never rejects a real item.
func TestQueueCompressionRatioIsBounded(t *testing.T) {
	msg := string(make([]byte, 512<<10)) // compresses thousands of times
	r := &eventsRequest{}
	r.append(streamID{"g", "s"}, []batching.Event{{Timestamp: 1, Message: msg}, {Timestamp: 2, Message: msg}})
	b := marshalRequest(r)
	_, back, err := queueEncoding{}.Unmarshal(b)
	require.NoError(t, err)
	assert.Equal(t, flatten(r), flatten(back.(*eventsRequest)))

	mode, _, _ := v4Parts(t, b)
	assert.Equal(t, byte(queuePlain), mode, "stored as it is")
	small := marshalRequest(formatRequest())
	assert.Equal(t, byte(queueS2), small[len(queueMagic)], "ordinary requests are compressed")
}

// An item the queue hands back that cannot be read is counted and logged: the persistent
// queue itself drops it without a word.
func TestQueueUnreadableItemIsCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	core, logs := zapobserver.New(zap.ErrorLevel)
	set.Logger = zap.New(core)
	e, err := newExporter(NewFactory().CreateDefaultConfig().(*Config), set)
	require.NoError(t, err)

	item := marshalRequest(formatRequest())
	item[len(item)-1] ^= 1
	_, _, err = queueEncoding{e}.Unmarshal(item)
	require.Error(t, err)
	_, _, err = queueEncoding{e}.Unmarshal(marshalRequest(formatRequest()))
	require.NoError(t, err)

	m, err := tel.GetMetric("otelcol_exporter_cloudwatch_groups_queue_items_unreadable")
	require.NoError(t, err)
	assert.Equal(t, int64(1), sumOf(m))
	require.Equal(t, 1, logs.Len())
	assert.Equal(t, len(item), int(logs.All()[0].ContextMap()["bytes"].(int64)))
}
