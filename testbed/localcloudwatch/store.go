// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"
)

// visible reports whether a resource created to become visible at t can be seen now.
func visible(t time.Time) bool { return t.IsZero() || !time.Now().Before(t) }

// Event is one stored log event.
type Event struct {
	// Timestamp is the event time in milliseconds since the Unix epoch, as sent.
	Timestamp int64 `json:"timestamp"`
	// Message is the event message, as sent.
	Message string `json:"message"`
	// IngestionTime is the server time (milliseconds) the event was stored.
	IngestionTime int64 `json:"ingestionTime"`
}

// GroupInfo describes a stored log group.
type GroupInfo struct {
	Name          string            `json:"name"`
	ARN           string            `json:"arn"`
	CreationTime  int64             `json:"creationTime"`
	RetentionDays int32             `json:"retentionInDays,omitempty"` // 0: never expire
	KMSKeyID      string            `json:"kmsKeyId,omitempty"`
	Class         string            `json:"logGroupClass"`
	Tags          map[string]string `json:"tags,omitempty"`
	Streams       int               `json:"streams"`
	Events        int64             `json:"events"`
	StoredBytes   int64             `json:"storedBytes"`
}

// StreamInfo describes a stored log stream.
type StreamInfo struct {
	Name                string `json:"name"`
	CreationTime        int64  `json:"creationTime"`
	FirstEventTimestamp int64  `json:"firstEventTimestamp,omitempty"`
	LastEventTimestamp  int64  `json:"lastEventTimestamp,omitempty"`
	LastIngestionTime   int64  `json:"lastIngestionTime,omitempty"`
	Events              int64  `json:"events"`
	StoredBytes         int64  `json:"storedBytes"`
	// OutOfOrderBatches counts accepted batches whose first event is older than the
	// newest event already stored in the stream.
	OutOfOrderBatches int64 `json:"outOfOrderBatches,omitempty"`
}

type logGroup struct {
	name      string
	created   int64
	visibleAt time.Time // CreationDelay: not found by other operations before
	retention int32
	kmsKeyID  string
	class     string
	tags      map[string]string
	streams   map[string]*logStream
}

type logStream struct {
	name          string
	created       int64
	visibleAt     time.Time // CreationDelay: not found by other operations before
	first, last   int64     // event timestamps; valid when count > 0
	lastIngestion int64
	count         int64
	storedBytes   int64
	outOfOrder    int64
	// events in arrival order (empty when messages are discarded).
	events []Event
	// sorted is true while events are in non-decreasing timestamp order.
	sorted bool
}

func (g *logGroup) info(s *Server) GroupInfo {
	gi := GroupInfo{
		Name: g.name, ARN: s.groupARN(g.name), CreationTime: g.created, RetentionDays: g.retention,
		KMSKeyID: g.kmsKeyID, Class: g.class, Streams: len(g.streams),
	}
	if len(g.tags) > 0 {
		gi.Tags = maps.Clone(g.tags)
	}
	for _, st := range g.streams {
		gi.Events += st.count
		gi.StoredBytes += st.storedBytes
	}
	return gi
}

func (st *logStream) info() StreamInfo {
	si := StreamInfo{
		Name: st.name, CreationTime: st.created, Events: st.count, StoredBytes: st.storedBytes,
		OutOfOrderBatches: st.outOfOrder,
	}
	if st.count > 0 {
		si.FirstEventTimestamp, si.LastEventTimestamp, si.LastIngestionTime = st.first, st.last, st.lastIngestion
	}
	return si
}

// append stores accepted events, already in chronological order among themselves.
func (st *logStream) append(events []Event, keep bool) {
	if len(events) == 0 {
		return
	}
	if st.count > 0 && events[0].Timestamp < st.last {
		st.outOfOrder++
		st.sorted = false
	}
	if st.count == 0 || events[0].Timestamp < st.first {
		st.first = events[0].Timestamp
	}
	if last := events[len(events)-1].Timestamp; st.count == 0 || last > st.last {
		st.last = last
	}
	st.lastIngestion = events[0].IngestionTime
	for _, e := range events {
		st.storedBytes += int64(len(e.Message))
	}
	st.count += int64(len(events))
	if keep {
		st.events = append(st.events, events...)
	}
}

// order returns the indexes of the stored events sorted by timestamp, arrival order
// breaking ties.
func (st *logStream) order() []int {
	idx := make([]int, len(st.events))
	for i := range idx {
		idx[i] = i
	}
	if !st.sorted {
		sort.SliceStable(idx, func(a, b int) bool {
			return st.events[idx[a]].Timestamp < st.events[idx[b]].Timestamp
		})
	}
	return idx
}

func (s *Server) groupARN(name string) string {
	return fmt.Sprintf("arn:aws:logs:%s:%s:log-group:%s", s.cfg.Region, s.cfg.AccountID, name)
}

func (s *Server) streamARN(group, stream string) string {
	return s.groupARN(group) + ":log-stream:" + stream
}

// Groups returns every log group, sorted by name.
func (s *Server) Groups() []GroupInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]GroupInfo, 0, len(s.groups))
	for _, name := range slices.Sorted(maps.Keys(s.groups)) {
		out = append(out, s.groups[name].info(s))
	}
	return out
}

// Group returns one log group.
func (s *Server) Group(name string) (GroupInfo, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, ok := s.groups[name]
	if !ok {
		return GroupInfo{}, false
	}
	return g.info(s), true
}

// Streams returns the streams of a log group, sorted by name.
func (s *Server) Streams(group string) ([]StreamInfo, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, ok := s.groups[group]
	if !ok {
		return nil, fmt.Errorf("log group %q does not exist", group)
	}
	out := make([]StreamInfo, 0, len(g.streams))
	for _, name := range slices.Sorted(maps.Keys(g.streams)) {
		out = append(out, g.streams[name].info())
	}
	return out, nil
}

// Events returns a copy of every event of a stream in the order the server stored
// them (arrival order, which GetLogEvents does not show when batches arrive out of
// timestamp order).
func (s *Server) Events(group, stream string) ([]Event, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, ok := s.groups[group]
	if !ok {
		return nil, fmt.Errorf("log group %q does not exist", group)
	}
	st, ok := g.streams[stream]
	if !ok {
		return nil, fmt.Errorf("log stream %q does not exist in log group %q", stream, group)
	}
	return slices.Clone(st.events), nil
}

// Reset deletes every log group and zeroes the counters. Faults stay as they are.
func (s *Server) Reset() {
	s.mu.Lock()
	s.groups = map[string]*logGroup{}
	s.mu.Unlock()
	s.limiter.reset()
	s.stats.reset()
}
