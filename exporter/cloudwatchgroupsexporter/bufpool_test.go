// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/bufpool"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/sender"
)

// scribbleOverPool takes buffers of every size class out of the pool, overwrites them and
// puts them back: a message still read from a buffer given back too early changes.
func scribbleOverPool() {
	for size := 4 << 10; size <= 8<<20; size *= 2 {
		var held [][]byte
		for range 16 {
			b := bufpool.Get(size)
			for i := range b {
				b[i] = 'Z'
			}
			held = append(held, b)
		}
		for _, b := range held {
			bufpool.Put(b)
		}
	}
}

// messagesOf lists every message of r (unpacked) as "stream|message", copied and sorted.
func messagesOf(t *testing.T, r *eventsRequest) []string {
	t.Helper()
	u, _, err := r.unpack()
	require.NoError(t, err)
	var out []string
	for _, s := range u.streams {
		for _, ev := range s.events {
			out = append(out, s.id.stream+"|"+strings.Clone(ev.Message))
		}
	}
	sort.Strings(out)
	return out
}

// unescape returns an event's message as CloudWatch stores it.
func unescape(t testing.TB, msg string) string {
	t.Helper()
	var s string
	require.NoError(t, json.Unmarshal([]byte(`"`+msg+`"`), &s), "not the content of a JSON string: %s", msg)
	return s
}

// The exporter gives its buffers back to the pool only at the end of their life: the arena
// of a request once the queue has stored it, the decoded messages of a request read back once
// every batch is delivered, never those of a push that failed and will be retried.
func TestPooledBuffersOutliveTheirMessages(t *testing.T) {
	awsEnv(t)
	b := startLocal(t, localConfig{})
	fail := &failingStreams{marker: "web-2"}
	e, _ := newPushExporter(t, b.endpoint, func(real sender.API) sender.API { fail.API = real; return fail })

	r, err := e.convert(context.Background(), makeLogs(testSources, 300, time.Now(), "node-1"))
	require.NoError(t, err)
	req := r.(*eventsRequest)
	require.Len(t, req.origins.runs, 1)
	item := req.origins.runs[0].o
	require.NotEmpty(t, item.arena, "route writes its messages to pooled chunks")
	want := messagesOf(t, req)

	enc := queueEncoding{e: e}
	stored, err := enc.Marshal(context.Background(), req)
	require.NoError(t, err)
	assert.Nil(t, item.arena, "Marshal gives the arena back")
	scribbleOverPool()
	_, back, err := enc.Unmarshal(stored)
	require.NoError(t, err)
	scribbleOverPool()
	require.Equal(t, want, messagesOf(t, back.(*eventsRequest)), "the queue's copy is intact")

	err = pushFor(e, back, 2*time.Second)
	require.Error(t, err)
	retry := back.(*eventsRequest).OnError(err).(*eventsRequest)
	scribbleOverPool()
	var wantRetry []string
	for _, m := range want {
		if strings.Contains(strings.SplitN(m, "|", 2)[0], "web-2") {
			wantRetry = append(wantRetry, m)
		}
	}
	require.NotEmpty(t, wantRetry)
	require.Equal(t, wantRetry, messagesOf(t, retry), "a failed push keeps its messages")

	fail.mu.Lock()
	fail.marker = ""
	fail.mu.Unlock()
	require.NoError(t, e.pushRequest(context.Background(), retry))
	var got []string
	for _, ev := range b.storedEvents(t) {
		got = append(got, ev.Message)
	}
	sort.Strings(got)
	var wantStored []string
	for _, m := range want {
		wantStored = append(wantStored, unescape(t, strings.SplitN(m, "|", 2)[1]))
	}
	sort.Strings(wantStored)
	assert.Equal(t, wantStored, got)
}

// In a memory queue the batcher cuts a request into pieces that share its arena: the chunks go
// back to the pool when the last piece holding its messages is delivered, not before, and
// never after a failed push.
func TestArenaGoesBackWithItsLastPiece(t *testing.T) {
	awsEnv(t)
	b := startLocal(t, localConfig{})
	e, _ := newPushExporter(t, b.endpoint, nil)
	ld := makeLogs(testSources[:1], 400, time.Now(), "node-1")
	r, err := e.convert(context.Background(), ld)
	require.NoError(t, err)
	req := r.(*eventsRequest)
	item := req.origins.runs[0].o
	require.NotEmpty(t, item.arena)
	want := messagesOf(t, req)

	pieces, err := req.MergeSplit(context.Background(), req.bytes/3, exporterhelper.RequestSizerTypeBytes, nil)
	require.NoError(t, err)
	require.Len(t, pieces, 4)
	assert.Equal(t, int32(4), item.refs.Load(), "every piece holds the item")
	var got []string
	for i, p := range pieces {
		got = append(got, messagesOf(t, p.(*eventsRequest))...)
		require.NoError(t, e.pushRequest(context.Background(), p))
		if i < len(pieces)-1 {
			assert.NotNil(t, item.arena, "pieces still to send read the arena")
		}
		scribbleOverPool()
		for _, q := range pieces[i+1:] {
			for _, m := range messagesOf(t, q.(*eventsRequest)) {
				assert.NotContains(t, m, "ZZZZ", "a piece still to send lost its messages")
			}
		}
	}
	sort.Strings(got)
	assert.Equal(t, want, got)
	assert.Nil(t, item.arena, "the last piece gave the arena back")
	assert.Equal(t, int32(0), item.refs.Load())
}
