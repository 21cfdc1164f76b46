// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestNegativeSetForgetsOldestFirst: at its bound the set forgets the uid remembered longest
// ago, not all of them; a uid remembered again counts from its new time; a removed uid is
// not forgotten in another's place.
func TestNegativeSetForgetsOldestFirst(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	type step struct {
		op  string // put, remove
		uid string
		t   int
	}
	tests := []struct {
		name  string
		max   int
		steps []step
		held  []string
		gone  []string
	}{
		{"below the bound: all held", 3, []step{{"put", "a", 1}, {"put", "b", 2}, {"put", "c", 3}}, []string{"a", "b", "c"}, nil},
		{"one over: the oldest forgotten", 3, []step{{"put", "a", 1}, {"put", "b", 2}, {"put", "c", 3}, {"put", "d", 4}}, []string{"b", "c", "d"}, []string{"a"}},
		{"remembered again: counts from then", 3, []step{{"put", "a", 1}, {"put", "b", 2}, {"put", "c", 3}, {"put", "a", 4}, {"put", "d", 5}}, []string{"a", "c", "d"}, []string{"b"}},
		{"removed: frees its place", 3, []step{{"put", "a", 1}, {"put", "b", 2}, {"put", "c", 3}, {"remove", "a", 0}, {"put", "d", 4}}, []string{"b", "c", "d"}, []string{"a"}},
		{"bound one", 1, []step{{"put", "a", 1}, {"put", "b", 2}}, []string{"b"}, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newNegativeSet(tt.max)
			for _, st := range tt.steps {
				if st.op == "remove" {
					s.remove(st.uid)
				} else {
					s.put(st.uid, at(st.t))
				}
			}
			for _, uid := range tt.held {
				_, ok := s.get(uid)
				assert.True(t, ok, "%s held", uid)
			}
			for _, uid := range tt.gone {
				_, ok := s.get(uid)
				assert.False(t, ok, "%s forgotten", uid)
			}
			assert.LessOrEqual(t, s.len(), tt.max)
		})
	}

	// Many uids remembered again and again: the order list stays bounded too.
	s := newNegativeSet(10)
	for i := range 10_000 {
		s.put(strconv.Itoa(i%12), at(i))
	}
	assert.Equal(t, 10, s.len())
	assert.LessOrEqual(t, len(s.order), 20)
	for i := 9_990; i < 10_000; i++ {
		_, ok := s.get(strconv.Itoa(i % 12))
		assert.True(t, ok, "the 10 most recent uids held")
	}
}
