// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"maps"
	"sync"
)

// Rejection reasons counted in Stats.RejectedEvents.
const (
	RejectTooOld  = "tooOld"  // older than the 14 day window
	RejectTooNew  = "tooNew"  // more than 2 hours in the future
	RejectExpired = "expired" // older than the log group's retention
)

// Stats are the server's counters since it started or was last Reset.
type Stats struct {
	// Requests counts API requests by operation, whatever their outcome.
	Requests map[string]int64 `json:"requests"`
	// Errors counts error answers by error code (the "__type"), including throttles
	// and injected faults.
	Errors map[string]int64 `json:"errors"`
	// Throttles counts every ThrottlingException answer; QuotaThrottles the ones due
	// to a rate quota, InjectedThrottles the ones due to Faults.ThrottleRate.
	Throttles         int64 `json:"throttles"`
	QuotaThrottles    int64 `json:"quotaThrottles"`
	InjectedThrottles int64 `json:"injectedThrottles"`
	// InjectedServerErrors counts ServiceUnavailableException answers from Faults.
	InjectedServerErrors int64 `json:"injectedServerErrors"`
	// InjectedErrors counts answers with Faults.ErrorCode.
	InjectedErrors int64 `json:"injectedErrors"`
	// DroppedConnections counts requests whose connection was closed unprocessed;
	// DroppedResponses the ones processed and then closed without a response.
	DroppedConnections int64 `json:"droppedConnections"`
	DroppedResponses   int64 `json:"droppedResponses"`
	// RejectedEvents counts events rejected through rejectedLogEventsInfo, by reason
	// (RejectTooOld, RejectTooNew, RejectExpired).
	RejectedEvents map[string]int64 `json:"rejectedEvents"`
	// PutLogEventsAccepted counts successful PutLogEvents calls; EventsAccepted and
	// MessageBytesAccepted the events they stored; BatchBytes the batch sizes as AWS
	// computes them (message bytes + 26 per event), rejected events included.
	PutLogEventsAccepted int64 `json:"putLogEventsAccepted"`
	EventsAccepted       int64 `json:"eventsAccepted"`
	MessageBytesAccepted int64 `json:"messageBytesAccepted"`
	BatchBytes           int64 `json:"batchBytes"`
	// BatchEvents counts the events of successful PutLogEvents calls, rejected included.
	BatchEvents int64 `json:"batchEvents"`
}

type stats struct {
	mu sync.Mutex
	s  Stats
}

func newStats() *stats {
	st := &stats{}
	st.reset()
	return st
}

func (st *stats) reset() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s = Stats{Requests: map[string]int64{}, Errors: map[string]int64{}, RejectedEvents: map[string]int64{}}
}

func (st *stats) update(f func(*Stats)) {
	st.mu.Lock()
	f(&st.s)
	st.mu.Unlock()
}

func (st *stats) snapshot() Stats {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := st.s
	out.Requests = maps.Clone(st.s.Requests)
	out.Errors = maps.Clone(st.s.Errors)
	out.RejectedEvents = maps.Clone(st.s.RejectedEvents)
	return out
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.stats.snapshot() }
