// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/bufpool"
)

// A split hands each piece the items its events come from, in order; an item's arena goes back
// with the last piece holding it.
func TestOriginsFollowPieces(t *testing.T) {
	item := func(units int64, n int) originRun {
		o := &origin{units: units, arena: [][]byte{bufpool.Get(4096)}}
		o.refs.Store(1)
		return originRun{o: o, n: n}
	}
	a, b := item(300, 3), item(200, 2)
	var og origins
	og.add(origins{runs: []originRun{a}})
	og.add(origins{runs: []originRun{b}})
	assert.Equal(t, int64(500), og.units)
	assert.Equal(t, 5, og.events())

	pieces := og.split([]int{2, 2, 1})
	require.Len(t, pieces, 3)
	assert.Equal(t, []originRun{{a.o, 2}}, pieces[0].runs)
	assert.Equal(t, []originRun{{a.o, 1}, {b.o, 1}}, pieces[1].runs)
	assert.Equal(t, []originRun{{b.o, 1}}, pieces[2].runs)
	assert.Equal(t, []int64{300, 500, 200}, []int64{pieces[0].units, pieces[1].units, pieces[2].units})
	assert.Equal(t, int32(2), a.o.refs.Load())
	assert.Equal(t, int32(2), b.o.refs.Load())

	pieces[0].release(true)
	assert.NotNil(t, a.o.arena, "the second piece still reads a")
	pieces[1].release(true)
	assert.Nil(t, a.o.arena)
	assert.NotNil(t, b.o.arena, "the third piece still reads b")
	pieces[2].release(false) // a failed push: left to the garbage collector
	assert.NotNil(t, b.o.arena)
	assert.Equal(t, int32(0), b.o.refs.Load())

	// Streams mixed: every piece holds every item.
	c, d := item(10, 1), item(20, 1)
	mixed := origins{runs: []originRun{c, d}, units: 30}
	shared := mixed.share(2)
	for _, p := range shared {
		assert.Equal(t, int64(30), p.units)
	}
	assert.Equal(t, int32(2), c.o.refs.Load())
	shared[1].release(true)
	assert.NotNil(t, c.o.arena)
	shared[0].release(true)
	assert.Nil(t, c.o.arena)
	assert.Nil(t, d.o.arena)
}
