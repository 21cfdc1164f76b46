// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/batching"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

func reqOf(id streamID, sizes ...int) *eventsRequest {
	r := &eventsRequest{}
	evs := make([]batching.Event, len(sizes))
	for i, n := range sizes {
		evs[i] = batching.Event{Timestamp: int64(i), Message: strings.Repeat("x", n)}
	}
	r.append(id, evs)
	return r
}

// unpacked returns r with its packed segments decoded (packed.go).
func unpacked(r *eventsRequest) *eventsRequest {
	u, _, err := r.unpack()
	if err != nil {
		panic(err) // a test helper: the requests are the test's own
	}
	return u
}

// flatten lists every event of the requests as "stream/timestamp/length", in order.
func flatten(reqs ...*eventsRequest) map[streamID][]string {
	out := map[streamID][]string{}
	for _, r := range reqs {
		if r == nil {
			continue
		}
		for _, s := range unpacked(r).streams {
			for _, ev := range s.events {
				out[s.id] = append(out[s.id], fmt.Sprintf("%d/%d", ev.Timestamp, len(ev.Message)))
			}
		}
	}
	return out
}

func TestMergeSplit(t *testing.T) {
	a, b := streamID{"g", "a"}, streamID{"g", "b"}
	tests := []struct {
		name    string
		req     *eventsRequest
		other   *eventsRequest
		sizer   exporterhelper.RequestSizerType
		max     int
		pieces  []int // ItemsCount of each returned request
		streams []int // streams of each returned request
	}{
		{"merge, no limit", reqOf(a, 10, 10), reqOf(a, 10), exporterhelper.RequestSizerTypeBytes, 0, []int{3}, []int{1}},
		{"merge into one stream below the limit", reqOf(a, 10), reqOf(a, 10), exporterhelper.RequestSizerTypeBytes, 100, []int{2}, []int{1}},
		{"merge two streams", reqOf(a, 10), reqOf(b, 10), exporterhelper.RequestSizerTypeBytes, 100, []int{2}, []int{2}},
		// each event is 10+26 = 36 bytes: two fit in 100, a third does not.
		{"split by bytes", reqOf(a, 10, 10, 10, 10, 10), nil, exporterhelper.RequestSizerTypeBytes, 100, []int{2, 2, 1}, []int{1, 1, 1}},
		{"split by items", reqOf(a, 1, 1, 1, 1, 1), nil, exporterhelper.RequestSizerTypeItems, 2, []int{2, 2, 1}, []int{1, 1, 1}},
		{"split across streams", reqOf(a, 10, 10), reqOf(b, 10, 10), exporterhelper.RequestSizerTypeBytes, 108, []int{3, 1}, []int{2, 1}},
		{"an oversized event travels alone", reqOf(a, 10, 500, 10), nil, exporterhelper.RequestSizerTypeBytes, 100, []int{1, 1, 1}, []int{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := flatten(tt.req, tt.other)
			var other xexporterhelper.Request
			if tt.other != nil {
				other = tt.other
			}
			out, err := tt.req.MergeSplit(context.Background(), tt.max, tt.sizer, other)
			require.NoError(t, err)
			var got []*eventsRequest
			var items, streams []int
			for _, r := range out {
				er := r.(*eventsRequest)
				got = append(got, er)
				items = append(items, er.ItemsCount())
				streams = append(streams, len(er.streams))
				assert.Equal(t, batchingBytes(er), er.BytesSize(), "cached size")
			}
			assert.Equal(t, tt.pieces, items)
			assert.Equal(t, tt.streams, streams)
			assert.Equal(t, want, flatten(got...), "every event once, in order per stream")
		})
	}
}

func batchingBytes(r *eventsRequest) int {
	n := 0
	for _, s := range r.streams {
		n += batching.Bytes(s.events)
	}
	return n
}

// Random merges and splits never lose, repeat or reorder an event, never exceed the limit
// (except a lone oversized event), whether the events are packed (read back from the queue)
// or not.
func TestMergeSplitProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := []streamID{{"g", "a"}, {"g", "b"}, {"h", "a"}}
	for round := range 300 {
		max := 50 + rng.IntN(2000)
		cur := &eventsRequest{}
		var all []*eventsRequest
		seq := 0
		var flushed []*eventsRequest
		for range 1 + rng.IntN(6) {
			in := &eventsRequest{}
			for range 1 + rng.IntN(4) {
				id := ids[rng.IntN(len(ids))]
				var evs []batching.Event
				for range rng.IntN(20) {
					seq++
					evs = append(evs, batching.Event{Timestamp: int64(seq), Message: strings.Repeat("m", rng.IntN(300))})
				}
				in.append(id, evs)
			}
			all = append(all, cloneRequest(in))
			if rng.IntN(2) == 0 {
				// Read back from the queue: packed segments mix with unpacked ones.
				var err error
				in, err = unmarshalRequest(marshalRequest(in))
				require.NoError(t, err)
			}
			out, err := cur.MergeSplit(context.Background(), max, exporterhelper.RequestSizerTypeBytes, in)
			require.NoError(t, err)
			if len(out) == 0 {
				continue
			}
			for i, r := range out {
				er := r.(*eventsRequest)
				require.Equal(t, batchingBytes(unpacked(er)), er.BytesSize(), "round %d: packed sizes", round)
				if er.BytesSize() > max {
					require.Equal(t, 1, er.ItemsCount(), "round %d: only a lone event may exceed the limit", round)
				}
				if i < len(out)-1 {
					flushed = append(flushed, er)
				} else {
					cur = er
				}
			}
		}
		flushed = append(flushed, cur)
		require.Equal(t, flatten(all...), flatten(flushed...), "round %d", round)
	}
}

func cloneRequest(r *eventsRequest) *eventsRequest {
	c := &eventsRequest{}
	for _, s := range r.streams {
		c.append(s.id, append([]batching.Event(nil), s.events...))
	}
	return c
}

func TestStreamPartitioner(t *testing.T) {
	p := streamPartitioner{}
	one := reqOf(streamID{"g", "s"}, 1)
	two := reqOf(streamID{"g", "s"}, 1)
	two.append(streamID{"g", "t"}, []batching.Event{{Message: "x"}})
	assert.Equal(t, "g\x00s", p.GetKey(context.Background(), one))
	assert.Empty(t, p.GetKey(context.Background(), two), "mixed requests share one partition")
	assert.NotEqual(t, p.GetKey(context.Background(), one), p.GetKey(context.Background(), reqOf(streamID{"g\x00s", ""}, 1)))
}

func TestQueueEncodingRoundTrip(t *testing.T) {
	r := reqOf(streamID{"/k8s/app", "node-1.web"}, 0, 1, 300)
	r.streams[0].events[1].Timestamp = -5
	r.append(streamID{"/k8s/infra", "node-1.é"}, []batching.Event{{Timestamp: time.Now().UnixMilli(), Message: "{\"body\":\"ü\"}"}})
	enc := queueEncoding{}
	b, err := enc.Marshal(context.Background(), r)
	require.NoError(t, err)
	_, back, err := enc.Unmarshal(b)
	require.NoError(t, err)
	assert.NotNil(t, back.(*eventsRequest).streams[0].packed, "read back packed")
	assert.Equal(t, r.BytesSize(), back.BytesSize())
	assert.Equal(t, r.ItemsCount(), back.ItemsCount())
	assert.Equal(t, r, unpacked(back.(*eventsRequest)))

	for i := range len(b) {
		_, _, err := enc.Unmarshal(b[:i]) // every truncation is an error, never a panic
		assert.Error(t, err, "cut at %d", i)
	}
}

func FuzzUnmarshalRequest(f *testing.F) {
	r := reqOf(streamID{"g", "s"}, 3, 0, 7)
	item := marshalRequest(r)
	f.Add(item[len(queueMagic):], uint8(0))
	f.Add(item[len(queueMagic)+4:], uint8(1))
	f.Add([]byte{0}, uint8(0))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), uint8(1))
	f.Add(item, uint8(2))
	f.Add(append([]byte("cwg\x04"), item[len(queueMagic):]...), uint8(2)) // an unreleased version
	f.Fuzz(func(t *testing.T, in []byte, kind uint8) {
		var (
			r   *eventsRequest
			err error
		)
		switch kind % 3 {
		case 0: // an item after the magic, sum included
			r, err = unmarshalRequest(append(append([]byte(nil), queueMagic...), in...))
		case 1: // an item's body (index and frames), with its sum
			r, err = unmarshalRequest(withSum(append([]byte(nil), in...)))
		default: // anything at all: another format is an error, like a corrupt item
			r, err = unmarshalRequest(append([]byte(nil), in...))
		}
		if err != nil {
			return
		}
		u, _, err := r.unpack()
		if err != nil {
			return // a block that only sending decodes
		}
		// Whatever decodes survives a round trip unchanged.
		back, err := unmarshalRequest(marshalRequest(u))
		require.NoError(t, err)
		assert.Equal(t, flatten(r), flatten(back))
		assert.Equal(t, r.ItemsCount(), back.ItemsCount())
		assert.Equal(t, r.BytesSize(), back.BytesSize())
	})
}

// Every queue shape users can configure delivers every event once: the default (batches
// partitioned by stream), batching off, the queue off, and the items sizer.
func TestQueueShapesDeliverEverything(t *testing.T) {
	awsEnv(t)
	shapes := map[string]func(*Config){
		"default":     func(*Config) {},
		"no batching": func(c *Config) { c.QueueConfig.Get().Batch = configoptional.None[exporterhelper.BatchConfig]() },
		"no queue":    func(c *Config) { c.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]() },
		"items sizer": func(c *Config) {
			b := c.QueueConfig.Get().Batch.Get()
			b.Sizer = exporterhelper.RequestSizerTypeItems
			b.MinSize, b.MaxSize = 50, 70
		},
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			b := startLocal(t, localConfig{})
			cfg := testConfig(b.endpoint)
			shape(cfg)
			require.NoError(t, cfg.Validate())
			exp := newTestExporter(t, cfg, component.NewID(metadata.Type), componenttest.NewNopHost())
			for range 3 {
				require.NoError(t, exp.ConsumeLogs(context.Background(), makeLogs(testSources, 40, time.Now(), "node-1")))
			}
			require.NoError(t, exp.Shutdown(context.Background()))
			assert.Len(t, b.storedEvents(t), 3*40*len(testSources))
		})
	}
}

// A request read back from the queue and cut into batches decodes, for each batch, only the
// frames that hold the batch's events: not the whole item once per batch.
func TestUnpackDecodesOnlyTheFramesItReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var evs []batching.Event
	total := 0
	for total < 5*queueChunk {
		msg := fmt.Sprintf(`{"body":"request %d served in %dms","trace":"%016x"}`, rng.IntN(1e6), rng.IntN(900), rng.Uint64())
		evs = append(evs, batching.Event{Timestamp: int64(len(evs)), Message: msg})
		total += len(msg)
	}
	r := reqWith(streamID{"g", "s"}, evs...)
	back, err := unmarshalRequest(marshalRequest(r))
	require.NoError(t, err)
	const limit = 100 << 10
	pieces, err := (&eventsRequest{}).MergeSplit(context.Background(), limit, exporterhelper.RequestSizerTypeBytes, back)
	require.NoError(t, err)
	require.Greater(t, len(pieces), 3)
	var got []string
	for _, p := range pieces {
		u, decoded, err := p.(*eventsRequest).unpack()
		require.NoError(t, err)
		n := 0
		for _, b := range decoded {
			n += len(b)
		}
		assert.LessOrEqual(t, n, p.BytesSize()+2*queueChunk, "decoded more frames than the piece's events are in")
		got = append(got, eventsOf(u)...)
	}
	assert.Equal(t, eventsOf(r), got)
}

// A request read back from the queue holds about its stored (compressed) size while it waits,
// not its decoded size: neither its events nor its stream names keep the decoded body alive.
func TestPackedRequestsHoldTheCompressedSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const items = 40
	var stored [][]byte
	decoded, compressed := 0, 0
	for i := range items {
		var evs []batching.Event
		for j := range 2000 {
			// JSON-like messages that compress a few times, as container logs do.
			evs = append(evs, batching.Event{Timestamp: int64(j), Message: fmt.Sprintf(
				`{"body":"request %d served in %dms","attributes":{"trace":"%016x","user":"u%d"},"resource":{"k8s.pod.name":"web-%d"}}`,
				rng.IntN(1e6), rng.IntN(900), rng.Uint64(), rng.IntN(50), i)})
		}
		r := &eventsRequest{}
		r.append(streamID{"/k8s/app", fmt.Sprintf("node-1/web-%d", i)}, evs)
		b := marshalRequest(r)
		decoded += r.BytesSize()
		compressed += len(b)
		stored = append(stored, b)
	}
	require.Less(t, compressed*2, decoded, "the test's messages must compress")

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	held := make([]*eventsRequest, 0, items)
	for _, b := range stored {
		r, err := unmarshalRequest(b)
		require.NoError(t, err)
		held = append(held, r)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int(after.HeapAlloc) - int(before.HeapAlloc)
	t.Logf("%d requests: %d bytes decoded, %d stored, heap grew by %d", items, decoded, compressed, grown)
	// The events' timestamps and spans (32 bytes each) plus the blocks (shared with stored).
	require.Less(t, grown, decoded/2, "waiting requests keep their decoded bodies")
	runtime.KeepAlive(held)
	runtime.KeepAlive(stored)
}
