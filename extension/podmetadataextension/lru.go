// SPDX-License-Identifier: Apache-2.0

package podmetadataextension

import (
	"container/list"
	"time"
)

// ttlCache is a bounded cache with a time to live (design.md rule 4): at most max entries, the
// least recently used one evicted first; an entry older than ttl is not returned. It is not
// safe for concurrent use (only the watch goroutine uses it).
type ttlCache[V any] struct {
	max   int
	ttl   time.Duration
	order *list.List // front: most recently used
	items map[string]*list.Element
}

type ttlEntry[V any] struct {
	key     string
	value   V
	expires time.Time
}

func newTTLCache[V any](maxEntries int, ttl time.Duration) *ttlCache[V] {
	return &ttlCache[V]{max: maxEntries, ttl: ttl, order: list.New(), items: map[string]*list.Element{}}
}

// get returns the value for key if it was put less than ttl before now.
func (c *ttlCache[V]) get(key string, now time.Time) (V, bool) {
	el, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	e := el.Value.(*ttlEntry[V])
	if !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, key)
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.value, true
}

// put stores value for key for ttl, evicting the least recently used entry beyond max.
func (c *ttlCache[V]) put(key string, value V, now time.Time) { c.putFor(key, value, now, c.ttl) }

// putFor stores value for key for life (a failed lookup is kept shorter than ttl).
func (c *ttlCache[V]) putFor(key string, value V, now time.Time, life time.Duration) {
	if el, ok := c.items[key]; ok {
		e := el.Value.(*ttlEntry[V])
		e.value, e.expires = value, now.Add(life)
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&ttlEntry[V]{key: key, value: value, expires: now.Add(life)})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*ttlEntry[V]).key)
	}
}

func (c *ttlCache[V]) len() int { return c.order.Len() }
