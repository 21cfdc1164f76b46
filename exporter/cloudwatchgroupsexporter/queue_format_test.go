// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	pdatareq "go.opentelemetry.io/collector/pdata/xpdata/request"
	"go.uber.org/zap"
	zapobserver "go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/batching"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// formatRequest is the fixed request of the queue format file in testdata, with its messages
// as events carry them (escaped).
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
// version byte (and a new file) fails here, and the file decodes. Regenerate it only together
// with a new queueMagic version. No earlier version was released, so none is read
// (TestQueueUnreadableItemIsCounted); once a version has been released, its file stays here
// and decodes.
func TestQueueFormatVersions(t *testing.T) {
	want := formatRequest()
	current := filepath.Join("testdata", "queue", "v5.bin")
	if os.Getenv("CW_WRITE_QUEUE_FORMAT") == "1" {
		require.NoError(t, os.WriteFile(current, marshalRequest(want), 0o600))
	}
	got, err := os.ReadFile(current)
	require.NoError(t, err)
	assert.Equal(t, got, marshalRequest(want), "the queue format changed: give it a new version byte (queueMagic) and a new file")
	assert.Equal(t, byte(5), queueMagic[len(queueMagic)-1])

	_, back, err := queueEncoding{}.Unmarshal(got)
	require.NoError(t, err)
	assert.Equal(t, eventsOf(want), eventsOf(back.(*eventsRequest)))
}

// withSum returns a version 5 item of body (everything after the sum), with its sum.
func withSum(body []byte) []byte {
	item := append(append([]byte(nil), queueMagic...), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(item[len(item)-4:], crc32.Checksum(body, castagnoli))
	return append(item, body...)
}

// indexPart returns the index at the start of an item's body (its mode byte,
// length and data) and the rest of body.
func indexPart(t *testing.T, body []byte) ([]byte, []byte) {
	t.Helper()
	n, k := binary.Uvarint(body[1:])
	require.Positive(t, k)
	k++
	return body[:k+int(n)], body[k+int(n):]
}

// frame is one frame of an item's messages.
type frame struct {
	mode byte
	data []byte
}

// v5Parts splits an item into its index part and its frames.
func v5Parts(t *testing.T, item []byte) ([]byte, []byte, []frame) {
	t.Helper()
	require.Equal(t, queueMagic, item[:len(queueMagic)])
	index, payload := indexPart(t, item[len(queueMagic)+4:])
	var frames []frame
	require.NoError(t, eachFrame(payload, func(mode byte, data []byte) error {
		frames = append(frames, frame{mode, data})
		return nil
	}))
	return index, payload, frames
}

// TestQueueCorruptLengthIsBounded: a queued item whose length field is corrupt (here an S2
// header claiming 1 GiB) is rejected without allocating what it claims, even when its sum
// is right (a bug that wrote it, not the disk).
func TestQueueCorruptLengthIsBounded(t *testing.T) {
	gib := binary.AppendUvarint(nil, 1<<30)
	// The frame's S2 block with its decoded-length header replaced by 1 GiB.
	index, _, frames := v5Parts(t, marshalRequest(formatRequest()))
	require.Len(t, frames, 1)
	require.Equal(t, byte(queueS2), frames[0].mode)
	_, n := binary.Uvarint(frames[0].data)
	require.Positive(t, n)
	corrupt := append(append([]byte(nil), gib...), frames[0].data[n:]...)
	v5 := append(append(append([]byte(nil), index...), queueS2), binary.AppendUvarint(nil, uint64(len(corrupt)))...)
	// The index's S2 block, likewise (the item's first frame follows it unchanged).
	_, k := binary.Uvarint(index[1:])
	require.Positive(t, k)
	require.Equal(t, byte(queueS2), index[0])
	block := index[1+k:]
	_, n = binary.Uvarint(block)
	require.Positive(t, n)
	corruptIndex := append(append([]byte(nil), gib...), block[n:]...)
	index2 := append(append([]byte{queueS2}, binary.AppendUvarint(nil, uint64(len(corruptIndex)))...), corruptIndex...)
	frame := append(append([]byte{queueS2}, binary.AppendUvarint(nil, uint64(len(frames[0].data)))...), frames[0].data...)
	for _, item := range [][]byte{
		withSum(append(v5, corrupt...)),
		withSum(append(index2, frame...)),
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

// TestQueueFramesHoldWholeMessages: the messages go into frames of at most queueChunk bytes
// that end where a message ends; a longer message is a frame of its own. Every message reads
// back whole, both packed and decoded at once.
func TestQueueFramesHoldWholeMessages(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcdefghij"[rng.IntN(10)]
		}
		return string(b)
	}
	ev := func(msg string) batching.Event { return batching.Event{Timestamp: 1, Message: msg} }
	cases := []struct {
		name   string
		events []batching.Event
		frames []int // their decoded sizes
	}{
		{"one byte", []batching.Event{ev("x")}, []int{1}},
		{"exactly a chunk", []batching.Event{ev(word(queueChunk))}, []int{queueChunk}},
		{"a chunk and one byte over", []batching.Event{ev(word(queueChunk - 1)), ev("ab")}, []int{queueChunk - 1, 2}},
		{"two that fill a chunk", []batching.Event{ev(word(queueChunk - 2)), ev("ab"), ev("c")}, []int{queueChunk, 1}},
		{"a message longer than a chunk", []batching.Event{ev("x"), ev(word(2 * queueChunk)), ev("y")}, []int{1, 2 * queueChunk, 1}},
		{"no messages", []batching.Event{ev(""), ev("")}, nil},
		{"an empty one after a full chunk", []batching.Event{ev(word(queueChunk)), ev(""), ev("z")}, []int{queueChunk, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &eventsRequest{}
			half := len(c.events) / 2
			r.append(streamID{"g", "a"}, c.events[:half])
			r.append(streamID{"g", "b"}, c.events[half:])
			item := marshalRequest(r)
			_, _, frames := v5Parts(t, item)
			var sizes []int
			for i, f := range frames {
				require.Equal(t, byte(queueS2), f.mode, "frame %d", i)
				n, err := s2.DecodedLen(f.data)
				require.NoError(t, err)
				sizes = append(sizes, n)
			}
			assert.Equal(t, c.frames, sizes)
			roundTrips(t, r, item)
		})
	}
	t.Run("many, of random sizes", func(t *testing.T) {
		var evs []batching.Event
		for total := 0; total < 4*queueChunk; {
			msg := word(1 + rng.IntN(3000))
			evs = append(evs, ev(msg))
			total += len(msg)
		}
		r := reqWith(streamID{"g", "s"}, evs...)
		item := marshalRequest(r)
		_, _, frames := v5Parts(t, item)
		next := 0 // the first message of the next frame
		for i, f := range frames {
			n, err := s2.DecodedLen(f.data)
			require.NoError(t, err)
			sum := 0
			for sum < n {
				sum += len(evs[next].Message)
				next++
			}
			require.Equal(t, n, sum, "frame %d ends where a message ends", i)
			require.LessOrEqual(t, n, queueChunk)
			if next < len(evs) {
				require.Greater(t, n+len(evs[next].Message), queueChunk, "frame %d had room for the next message", i)
			}
		}
		require.Len(t, evs, next)
		roundTrips(t, r, item)
	})
}

// roundTrips checks that item, marshaled from r, reads back as r's events: packed, and with
// its messages decoded at once.
func roundTrips(t *testing.T, r *eventsRequest, item []byte) {
	t.Helper()
	back, err := unmarshalRequest(item)
	require.NoError(t, err)
	assert.Equal(t, eventsOf(r), eventsOf(back))
	streams, total, payload, err := readIndex(item[len(queueMagic)+4:])
	require.NoError(t, err)
	msgs, err := decodeFrames(payload, total)
	require.NoError(t, err)
	assert.Equal(t, eventsOf(r), eventsOf(withMessages(streams, msgs)), "decoded at once")
}

// TestQueueFramesMustAddUp: frames that decode to more or less than the index says, or with an
// unknown mode, are an error, with a right sum.
func TestQueueFramesMustAddUp(t *testing.T) {
	index, _, frames := v5Parts(t, marshalRequest(formatRequest()))
	require.Len(t, frames, 1)
	frameOf := func(mode byte, data []byte) []byte {
		return append(append([]byte{mode}, binary.AppendUvarint(nil, uint64(len(data)))...), data...)
	}
	good := frameOf(queueS2, frames[0].data)
	plain, err := s2.Decode(nil, frames[0].data)
	require.NoError(t, err)
	first := len(formatRequest().streams[0].events[0].Message)
	items := map[string][]byte{
		"a message cut by a frame's end": append(frameOf(queuePlain, plain[:first+3]), frameOf(queuePlain, plain[first+3:])...),
		"no frames":                      nil,
		"a frame twice":                  append(append([]byte(nil), good...), good...),
		"an empty frame added":           append(append([]byte(nil), good...), frameOf(queuePlain, nil)...),
		"a byte short":                   frameOf(queuePlain, plain[:len(plain)-1]),
		"a byte over":                    frameOf(queuePlain, append(append([]byte(nil), plain...), 'x')),
		"an unknown mode":                frameOf('z', frames[0].data),
		"a length past the end":          append([]byte{queueS2}, binary.AppendUvarint(nil, uint64(len(frames[0].data)+1))...),
	}
	for name, payload := range items {
		_, err := unmarshalRequest(withSum(append(append([]byte(nil), index...), payload...)))
		if name == "an empty frame added" {
			require.NoError(t, err, "an empty frame adds nothing") // the encoder never writes one; the sum still guards it
			continue
		}
		require.Error(t, err, name)
	}
	for name, payload := range map[string][]byte{
		"one plain frame":               frameOf(queuePlain, plain),
		"two, cut between two messages": append(frameOf(queuePlain, plain[:first]), frameOf(queuePlain, plain[first:])...),
	} {
		back, err := unmarshalRequest(withSum(append(append([]byte(nil), index...), payload...)))
		require.NoError(t, err, name)
		assert.Equal(t, eventsOf(formatRequest()), eventsOf(back), name)
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
	_, payload, _ := v5Parts(t, item)
	for _, s := range r.streams {
		require.NotNil(t, s.packed, s.id.stream)
		assert.Equal(t, unsafe.SliceData(payload), unsafe.SliceData(s.packed.block), "the stored frames themselves")
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

	_, _, frames := v5Parts(t, b)
	require.Len(t, frames, 2) // each message longer than a chunk is a frame
	for _, f := range frames {
		assert.Equal(t, byte(queuePlain), f.mode, "stored as it is")
		assert.Len(t, f.data, 512<<10)
	}
	_, _, frames = v5Parts(t, marshalRequest(formatRequest()))
	require.Len(t, frames, 1)
	assert.Equal(t, byte(queueS2), frames[0].mode, "ordinary requests are compressed")
}

// An item the queue hands back that cannot be read is counted and logged, never a crash: the
// persistent queue itself drops it without a word. Items of another format are unreadable
// like corrupt ones: versions 1 to 4 were never released, a newer one is a downgrade, and
// OTLP logs (what exporterhelper queues without a queue encoding) are no request of ours.
func TestQueueUnreadableItemIsCounted(t *testing.T) {
	good := marshalRequest(formatRequest())
	withVersion := func(v byte) []byte {
		item := append([]byte(nil), good...)
		item[len(queueMagic)-1] = v
		return item
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)-1] ^= 1
	otlp, err := pdatareq.MarshalLogs(context.Background(), makeLogs(testSources[:2], 3, time.Now(), "node-1"))
	require.NoError(t, err)
	// A version 3 item as that version wrote it: "cwg\x03", a plain mode byte, and the body
	// of one stream g/s with one event {1, "abc"}.
	v3 := []byte("cwg\x03p\x01\x01g\x01s\x01\x02\x00\x03abc")

	cases := []struct {
		name string
		item []byte
		want string // in the logged error
	}{
		{"a flipped bit", flipped, "corrupt queued request"},
		{"version 1", withVersion(1), "version 1, this build reads only version 5"},
		{"version 2", withVersion(2), "version 2,"},
		{"version 3", v3, "version 3,"},
		{"version 4", withVersion(4), "version 4,"},
		{"version 0", withVersion(0), "version 0,"},
		{"a newer version", withVersion(6), "version 6,"},
		{"OTLP logs", otlp, "not of this build's format"},
		{"the magic only", queueMagic, "corrupt queued request"},
		{"a short magic", []byte("cwg"), "not of this build's format"},
		{"empty", nil, "not of this build's format"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
			set := exportertest.NewNopSettings(metadata.Type)
			set.TelemetrySettings = tel.NewTelemetrySettings()
			core, logs := zapobserver.New(zap.ErrorLevel)
			set.Logger = zap.New(core)
			e, err := newExporter(NewFactory().CreateDefaultConfig().(*Config), set)
			require.NoError(t, err)

			_, req, err := queueEncoding{e}.Unmarshal(c.item)
			require.Error(t, err)
			assert.Nil(t, req)
			_, req, err = queueEncoding{e}.Unmarshal(good)
			require.NoError(t, err)
			assert.Equal(t, eventsOf(formatRequest()), eventsOf(req.(*eventsRequest)))

			m, err := tel.GetMetric("otelcol_exporter_cloudwatch_groups_queue_items_unreadable")
			require.NoError(t, err)
			assert.Equal(t, int64(1), sumOf(m))
			require.Equal(t, 1, logs.Len())
			entry := logs.All()[0]
			assert.Equal(t, len(c.item), int(entry.ContextMap()["bytes"].(int64)))
			assert.Contains(t, entry.ContextMap()["error"], c.want)
		})
	}
}
