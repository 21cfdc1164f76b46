// SPDX-License-Identifier: Apache-2.0

package podmetadataextension

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTTLCache(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	type step struct {
		op    string // put, fail (putFor 1s), get
		key   string
		at    time.Duration
		value int
		found bool
	}
	for _, tc := range []struct {
		name    string
		max     int
		steps   []step
		wantLen int
	}{
		{"hit within ttl", 2, []step{{op: "put", key: "a", value: 1}, {op: "get", key: "a", at: 9 * time.Second, value: 1, found: true}}, 1},
		{"expired at ttl", 2, []step{{op: "put", key: "a", value: 1}, {op: "get", key: "a", at: 10 * time.Second}}, 0},
		{"least recently used evicted", 2, []step{
			{op: "put", key: "a", value: 1},
			{op: "put", key: "b", value: 2},
			{op: "get", key: "a", value: 1, found: true}, // a is now the most recent
			{op: "put", key: "c", value: 3},
			{op: "get", key: "b"},
			{op: "get", key: "a", value: 1, found: true},
			{op: "get", key: "c", value: 3, found: true},
		}, 2},
		{"a failure lives shorter", 2, []step{{op: "fail", key: "a", value: 7}, {op: "get", key: "a", at: 999 * time.Millisecond, value: 7, found: true}, {op: "get", key: "a", at: time.Second}}, 0},
		{"put again refreshes", 1, []step{{op: "put", key: "a", value: 1}, {op: "put", key: "a", at: 5 * time.Second, value: 2}, {op: "get", key: "a", at: 14 * time.Second, value: 2, found: true}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTTLCache[int](tc.max, 10*time.Second)
			for i, s := range tc.steps {
				now := t0.Add(s.at)
				switch s.op {
				case "put":
					c.put(s.key, s.value, now)
				case "fail":
					c.putFor(s.key, s.value, now, time.Second)
				case "get":
					v, ok := c.get(s.key, now)
					assert.Equal(t, s.found, ok, "step %d", i)
					assert.Equal(t, s.value, v, "step %d", i)
				}
				assert.LessOrEqual(t, c.len(), tc.max)
			}
			assert.Equal(t, tc.wantLen, c.len())
		})
	}
}
