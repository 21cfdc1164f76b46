// SPDX-License-Identifier: Apache-2.0

// Package objevents is the one contract through which the component that watches Events
// (kube_events) hands each Event it receives to the components that act on Events about
// objects instead of watching the objects (kube_lifecycle's rollouts), and the hub that joins
// them. The hub lives in an extension both find on the collector (trace_context); no component
// module requires another.
//
// Delivery rules:
//  1. The publisher calls PublishObjectEvents on its watch goroutine with every Event it
//     received (list or watch), before its own filters, and PublishLeading when it starts and
//     stops publishing (a term of its leader election, or its start and shutdown without one).
//  2. The hub calls each subscriber synchronously on the publisher's goroutine: a subscriber
//     must not block (it copies what it needs into a bounded queue of its own and counts what
//     that queue drops). Events are not retained by the hub.
//  3. A subscriber that joins while the publisher leads learns it at once (Leading(true)).
package objevents

import (
	"sync"
	"time"
)

// Ref names an Event's regarding object.
type Ref struct {
	APIVersion, Kind, Namespace, Name, UID string
}

// Event is what a subscriber learns of one Event.
type Event struct {
	Regarding           Ref
	Reason              string
	ReportingController string
	Note                string
	// Time is the Event's latest occurrence (eventTime, series or legacy timestamps).
	Time time.Time
}

// Subscriber receives Events from a Hub. Both methods must return quickly (rule 2).
type Subscriber interface {
	// ObjectEvents receives a batch of Events; listed says they come from a (re)list, the first
	// one of a term included: Events that may have been seen before (a leader handover replays
	// the recent Events of the cluster).
	ObjectEvents(events []Event, listed bool)
	// Leading says whether the publisher publishes: false when its term ends (Events stop
	// until the next true).
	Leading(leading bool)
}

// Publisher is implemented by the hub's host for the Event watcher.
type Publisher interface {
	PublishObjectEvents(events []Event, listed bool)
	PublishLeading(leading bool)
}

// Subscribable is implemented by the hub's host for the components that act on Events.
type Subscribable interface {
	// SubscribeObjectEvents adds s; the returned function removes it.
	SubscribeObjectEvents(s Subscriber) (unsubscribe func())
}

// Hub fans Events out to subscribers; its zero value is ready. An extension embeds it to be
// both a Publisher and a Subscribable.
type Hub struct {
	mu      sync.RWMutex
	subs    map[int]Subscriber
	next    int
	leading bool
}

var (
	_ Publisher    = (*Hub)(nil)
	_ Subscribable = (*Hub)(nil)
)

// SubscribeObjectEvents adds s (rule 3).
func (h *Hub) SubscribeObjectEvents(s Subscriber) func() {
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[int]Subscriber{}
	}
	id := h.next
	h.next++
	h.subs[id] = s
	leading := h.leading
	h.mu.Unlock()
	if leading {
		s.Leading(true)
	}
	return func() {
		h.mu.Lock()
		delete(h.subs, id)
		h.mu.Unlock()
	}
}

// PublishObjectEvents hands events to every subscriber (rule 2).
func (h *Hub) PublishObjectEvents(events []Event, listed bool) {
	if len(events) == 0 {
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, s := range h.subs {
		s.ObjectEvents(events, listed)
	}
}

// PublishLeading tells every subscriber whether Events flow.
func (h *Hub) PublishLeading(leading bool) {
	h.mu.Lock()
	h.leading = leading
	subs := make([]Subscriber, 0, len(h.subs))
	for _, s := range h.subs {
		subs = append(subs, s)
	}
	h.mu.Unlock()
	for _, s := range subs {
		s.Leading(leading)
	}
}
