// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"sync"
	"time"
)

// limiter holds one token bucket per quota key. Each bucket refills at its rate and
// holds one second of requests (at least one token).
type limiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	now     func() time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter() *limiter {
	return &limiter{buckets: map[string]*bucket{}, now: time.Now}
}

// allow takes a token from key's bucket if one is available; rate <= 0 always allows.
func (l *limiter) allow(key string, rate float64) bool {
	if rate <= 0 {
		return true
	}
	burst := max(rate, 1)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: burst, last: now}
		l.buckets[key] = b
	}
	b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (l *limiter) reset() {
	l.mu.Lock()
	l.buckets = map[string]*bucket{}
	l.mu.Unlock()
}
