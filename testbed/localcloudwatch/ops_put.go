// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"fmt"
	"sort"
)

type inputLogEvent struct {
	Timestamp *int64  `json:"timestamp"`
	Message   *string `json:"message"`
}

type putLogEventsInput struct {
	LogGroupName  *string         `json:"logGroupName"`
	LogStreamName *string         `json:"logStreamName"`
	LogEvents     []inputLogEvent `json:"logEvents"`
	SequenceToken *string         `json:"sequenceToken"` // ignored, as by AWS since 2023
}

type rejectedLogEventsInfo struct {
	TooNewLogEventStartIndex *int32 `json:"tooNewLogEventStartIndex,omitempty"`
	TooOldLogEventEndIndex   *int32 `json:"tooOldLogEventEndIndex,omitempty"`
	ExpiredLogEventEndIndex  *int32 `json:"expiredLogEventEndIndex,omitempty"`
}

type putLogEventsOutput struct {
	NextSequenceToken     string                 `json:"nextSequenceToken"`
	RejectedLogEventsInfo *rejectedLogEventsInfo `json:"rejectedLogEventsInfo,omitempty"`
}

// validateBatch applies the request-level PutLogEvents rules that do not depend on
// stored state: event count, required members, event and batch size, order.
// It returns the batch size as AWS computes it.
func (s *Server) validateBatch(events []inputLogEvent) (int, *apiError) {
	lim := s.limits
	if len(events) == 0 {
		return 0, constraintError("[]", "logEvents", "Member must have length greater than or equal to 1")
	}
	if len(events) > lim.MaxBatchEvents {
		return 0, constraintError(fmt.Sprintf("[%d events]", len(events)), "logEvents",
			fmt.Sprintf("Member must have length less than or equal to %d", lim.MaxBatchEvents))
	}
	total := 0
	for i, e := range events {
		member := func() string { return fmt.Sprintf("logEvents.%d.member", i+1) }
		switch {
		case e.Timestamp == nil:
			return 0, constraintError("null", member()+".timestamp", "Member must not be null")
		case *e.Timestamp < 0:
			return 0, constraintError(*e.Timestamp, member()+".timestamp", "Member must have value greater than or equal to 0")
		case e.Message == nil:
			return 0, constraintError("null", member()+".message", "Member must not be null")
		case len(*e.Message) == 0:
			return 0, constraintError("", member()+".message", "Member must have length greater than or equal to 1")
		}
		size := len(*e.Message) + EventOverheadBytes
		if size > lim.MaxEventBytes {
			return 0, invalidParam("Log event too large: %d bytes exceeds limit of %d", size, lim.MaxEventBytes)
		}
		total += size
	}
	if total > lim.MaxBatchBytes {
		return 0, invalidParam("Upload too large: %d bytes exceeds limit of %d", total, lim.MaxBatchBytes)
	}
	for i := 1; i < len(events); i++ {
		if *events[i].Timestamp < *events[i-1].Timestamp {
			return 0, invalidParam("Log events in a single PutLogEvents request must be in chronological order.")
		}
	}
	return total, nil
}

func (s *Server) putLogEvents(in *putLogEventsInput) (any, *apiError) {
	if err := required(in.LogGroupName, "logGroupName"); err != nil {
		return nil, err
	}
	if err := validateGroupName(*in.LogGroupName, "logGroupName"); err != nil {
		return nil, err
	}
	if err := required(in.LogStreamName, "logStreamName"); err != nil {
		return nil, err
	}
	if err := validateStreamName(*in.LogStreamName, "logStreamName"); err != nil {
		return nil, err
	}
	batchBytes, aerr := s.validateBatch(in.LogEvents)
	if aerr != nil {
		return nil, aerr
	}
	if !s.limiter.allow("PutLogEvents\x00"+*in.LogGroupName+"\x00"+*in.LogStreamName, s.cfg.Quotas.PutLogEventsPerStream) {
		return nil, errThrottled
	}

	now := s.nowMillis()
	n := len(in.LogEvents)
	ts := func(i int) int64 { return *in.LogEvents[i].Timestamp }
	// Events are in chronological order, so each rejected class is a prefix or suffix.
	tooOldEnd := sort.Search(n, func(i int) bool { return ts(i) >= now-s.limits.MaxAge.Milliseconds() })
	tooNewStart := sort.Search(n, func(i int) bool { return ts(i) > now+s.limits.MaxFuture.Milliseconds() })

	s.mu.Lock()
	defer s.mu.Unlock()
	g, aerr := s.lookupGroup(in.LogGroupName)
	if aerr != nil {
		return nil, aerr
	}
	st, aerr := lookupStream(g, in.LogStreamName)
	if aerr != nil {
		return nil, aerr
	}
	expiredEnd := tooOldEnd
	if g.retention > 0 {
		cutoff := now - int64(g.retention)*24*3600*1000
		expiredEnd = max(tooOldEnd, sort.Search(n, func(i int) bool { return ts(i) >= cutoff }))
	}
	start, end := expiredEnd, max(expiredEnd, tooNewStart)
	if end > start && ts(end-1)-ts(start) > s.limits.MaxSpan.Milliseconds() {
		return nil, invalidParam("The batch of log events in a single PutLogEvents request cannot span more than 24 hours.")
	}
	accepted := make([]Event, 0, end-start)
	msgBytes := int64(0)
	for _, e := range in.LogEvents[start:end] {
		accepted = append(accepted, Event{Timestamp: *e.Timestamp, Message: *e.Message, IngestionTime: now})
		msgBytes += int64(len(*e.Message))
	}
	st.append(accepted, !s.cfg.DiscardMessages)

	out := putLogEventsOutput{NextSequenceToken: fmt.Sprintf("%056d", st.count)}
	var rej rejectedLogEventsInfo
	if tooOldEnd > 0 {
		rej.TooOldLogEventEndIndex = ptr(int32(tooOldEnd))
	}
	if expiredEnd > tooOldEnd {
		rej.ExpiredLogEventEndIndex = ptr(int32(expiredEnd)) //nolint:gosec // an index into the batch, which validateBatch limits to MaxBatchEvents
	}
	if tooNewStart < n {
		rej.TooNewLogEventStartIndex = ptr(int32(tooNewStart)) //nolint:gosec // an index into the batch, which validateBatch limits to MaxBatchEvents
	}
	if rej != (rejectedLogEventsInfo{}) {
		out.RejectedLogEventsInfo = &rej
	}
	s.stats.update(func(x *Stats) {
		x.PutLogEventsAccepted++
		x.EventsAccepted += int64(len(accepted))
		x.MessageBytesAccepted += msgBytes
		x.BatchBytes += int64(batchBytes)
		x.BatchEvents += int64(n)
		if tooOldEnd > 0 {
			x.RejectedEvents[RejectTooOld] += int64(tooOldEnd)
		}
		if expiredEnd > tooOldEnd {
			x.RejectedEvents[RejectExpired] += int64(expiredEnd - tooOldEnd)
		}
		if tooNewStart < n {
			x.RejectedEvents[RejectTooNew] += int64(n - tooNewStart)
		}
	})
	return out, nil
}

func ptr[T any](v T) *T { return &v }
