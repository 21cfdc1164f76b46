// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// maxResponseBytes caps the events of one GetLogEvents / FilterLogEvents page, counted
// like PutLogEvents batches (message bytes + 26 per event).
const maxResponseBytes = 1_048_576

type getLogEventsInput struct {
	LogGroupName       *string `json:"logGroupName"`
	LogGroupIdentifier *string `json:"logGroupIdentifier"`
	LogStreamName      *string `json:"logStreamName"`
	StartTime          *int64  `json:"startTime"`
	EndTime            *int64  `json:"endTime"`
	NextToken          *string `json:"nextToken"`
	Limit              *int32  `json:"limit"`
	StartFromHead      *bool   `json:"startFromHead"`
}

type outputLogEvent struct {
	Timestamp     int64  `json:"timestamp"`
	Message       string `json:"message"`
	IngestionTime int64  `json:"ingestionTime"`
}

// eventKey orders the events of one stream: timestamp, then arrival.
type eventKey struct{ ts, seq int64 }

func (k eventKey) compare(o eventKey) int {
	return cmp.Or(cmp.Compare(k.ts, o.ts), cmp.Compare(k.seq, o.seq))
}

// A GetLogEvents token is "f/<ts>/<seq>" (events after the key) or "b/<ts>/<seq>"
// (events before the key).
func eventToken(dir byte, k eventKey) string { return fmt.Sprintf("%c/%d/%d", dir, k.ts, k.seq) }

func parseEventToken(tok string) (byte, eventKey, bool) {
	parts := strings.Split(tok, "/")
	if len(parts) != 3 || (parts[0] != "f" && parts[0] != "b") {
		return 0, eventKey{}, false
	}
	ts, err1 := strconv.ParseInt(parts[1], 10, 64)
	seq, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, eventKey{}, false
	}
	return parts[0][0], eventKey{ts, seq}, true
}

func (s *Server) getLogEvents(in *getLogEventsInput) (any, *apiError) {
	limit, aerr := limitParam(in.Limit, 10_000, 10_000)
	if aerr != nil {
		return nil, aerr
	}
	dir, from := byte('b'), eventKey{math.MaxInt64, 0}
	if in.StartFromHead != nil && *in.StartFromHead {
		dir, from = 'f', eventKey{0, -1}
	}
	if in.NextToken != nil {
		var ok bool
		if dir, from, ok = parseEventToken(*in.NextToken); !ok {
			return nil, errBadToken
		}
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	g, aerr := s.lookupGroupByNameOrID(in.LogGroupName, in.LogGroupIdentifier)
	if aerr != nil {
		return nil, aerr
	}
	st, aerr := lookupStream(g, in.LogStreamName)
	if aerr != nil {
		return nil, aerr
	}
	// Events in [startTime, endTime), sorted by key.
	var keys []eventKey
	for _, i := range st.order() {
		t := st.events[i].Timestamp
		if (in.StartTime != nil && t < *in.StartTime) || (in.EndTime != nil && t >= *in.EndTime) {
			continue
		}
		keys = append(keys, eventKey{t, int64(i)})
	}
	var page []eventKey
	size := 0
	fits := func(k eventKey) bool {
		sz := len(st.events[k.seq].Message) + EventOverheadBytes
		if len(page) == limit || (len(page) > 0 && size+sz > maxResponseBytes) {
			return false
		}
		size += sz
		page = append(page, k)
		return true
	}
	if dir == 'f' {
		i, _ := slices.BinarySearchFunc(keys, from, func(a, b eventKey) int {
			if a.compare(b) <= 0 {
				return -1
			}
			return 1
		})
		for ; i < len(keys) && fits(keys[i]); i++ {
		}
	} else {
		j, _ := slices.BinarySearchFunc(keys, from, eventKey.compare)
		for j--; j >= 0 && fits(keys[j]); j-- {
		}
		slices.Reverse(page)
	}
	out := struct {
		Events            []outputLogEvent `json:"events"`
		NextForwardToken  string           `json:"nextForwardToken"`
		NextBackwardToken string           `json:"nextBackwardToken"`
	}{Events: make([]outputLogEvent, 0, len(page))}
	for _, k := range page {
		e := st.events[k.seq]
		out.Events = append(out.Events, outputLogEvent(e))
	}
	if len(page) == 0 {
		out.NextForwardToken, out.NextBackwardToken = eventToken('f', from), eventToken('b', from)
	} else {
		out.NextForwardToken, out.NextBackwardToken = eventToken('f', page[len(page)-1]), eventToken('b', page[0])
	}
	return out, nil
}

type filterLogEventsInput struct {
	LogGroupName        *string  `json:"logGroupName"`
	LogGroupIdentifier  *string  `json:"logGroupIdentifier"`
	LogStreamNames      []string `json:"logStreamNames"`
	LogStreamNamePrefix *string  `json:"logStreamNamePrefix"`
	StartTime           *int64   `json:"startTime"`
	EndTime             *int64   `json:"endTime"`
	FilterPattern       *string  `json:"filterPattern"`
	NextToken           *string  `json:"nextToken"`
	Limit               *int32   `json:"limit"`
	StartFromHead       *bool    `json:"startFromHead"`
}

type filteredLogEvent struct {
	LogStreamName string `json:"logStreamName"`
	Timestamp     int64  `json:"timestamp"`
	Message       string `json:"message"`
	IngestionTime int64  `json:"ingestionTime"`
	EventID       string `json:"eventId"`
}

type searchedLogStream struct {
	LogStreamName      string `json:"logStreamName"`
	SearchedCompletely bool   `json:"searchedCompletely"`
}

// filterKey orders events across streams: timestamp, stream name, arrival.
type filterKey struct {
	ts     int64
	stream string
	seq    int64
}

func (k filterKey) compare(o filterKey) int {
	return cmp.Or(cmp.Compare(k.ts, o.ts), strings.Compare(k.stream, o.stream), cmp.Compare(k.seq, o.seq))
}

func (s *Server) filterLogEvents(in *filterLogEventsInput) (any, *apiError) {
	limit, aerr := limitParam(in.Limit, 10_000, 10_000)
	if aerr != nil {
		return nil, aerr
	}
	if len(in.LogStreamNames) > 0 && in.LogStreamNamePrefix != nil {
		return nil, invalidParam("logStreamNames and logStreamNamePrefix are mutually exclusive.")
	}
	if len(in.LogStreamNames) > 100 {
		return nil, constraintError("[...]", "logStreamNames", "Member must have length less than or equal to 100")
	}
	for i, n := range in.LogStreamNames {
		if err := validateStreamName(n, fmt.Sprintf("logStreamNames.%d.member", i+1)); err != nil {
			return nil, err
		}
	}
	match := func(string) bool { return true }
	if in.FilterPattern != nil {
		var err *apiError
		if match, err = compileFilterPattern(*in.FilterPattern); err != nil {
			return nil, err
		}
	}
	desc := in.StartFromHead != nil && !*in.StartFromHead
	var after *filterKey
	if in.NextToken != nil {
		parts, ok := parsePageToken(*in.NextToken, "filter", 4)
		if !ok || (parts[0] != "asc" && parts[0] != "desc") {
			return nil, errBadToken
		}
		ts, err1 := strconv.ParseInt(parts[1], 10, 64)
		seq, err2 := strconv.ParseInt(parts[3], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, errBadToken
		}
		desc = parts[0] == "desc"
		after = &filterKey{ts, parts[2], seq}
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	g, aerr := s.lookupGroupByNameOrID(in.LogGroupName, in.LogGroupIdentifier)
	if aerr != nil {
		return nil, aerr
	}
	var streams []*logStream
	if len(in.LogStreamNames) > 0 {
		for _, n := range in.LogStreamNames {
			if st, ok := g.streams[n]; ok {
				streams = append(streams, st)
			}
		}
	} else {
		for _, n := range slices.Sorted(maps.Keys(g.streams)) {
			if in.LogStreamNamePrefix == nil || strings.HasPrefix(n, *in.LogStreamNamePrefix) {
				streams = append(streams, g.streams[n])
			}
		}
	}
	var keys []filterKey
	for _, st := range streams {
		for i, e := range st.events {
			if (in.StartTime != nil && e.Timestamp < *in.StartTime) || (in.EndTime != nil && e.Timestamp > *in.EndTime) {
				continue
			}
			k := filterKey{e.Timestamp, st.name, int64(i)}
			if after != nil && ((!desc && k.compare(*after) <= 0) || (desc && k.compare(*after) >= 0)) {
				continue
			}
			if match(e.Message) {
				keys = append(keys, k)
			}
		}
	}
	slices.SortFunc(keys, func(a, b filterKey) int {
		if desc {
			return b.compare(a)
		}
		return a.compare(b)
	})
	out := struct {
		Events             []filteredLogEvent  `json:"events"`
		SearchedLogStreams []searchedLogStream `json:"searchedLogStreams"`
		NextToken          string              `json:"nextToken,omitempty"`
	}{Events: []filteredLogEvent{}, SearchedLogStreams: []searchedLogStream{}}
	size := 0
	for i, k := range keys {
		e := g.streams[k.stream].events[k.seq]
		sz := len(e.Message) + EventOverheadBytes
		if i == limit || (i > 0 && size+sz > maxResponseBytes) {
			last := keys[i-1]
			dir := "asc"
			if desc {
				dir = "desc"
			}
			out.NextToken = pageToken("filter", dir, strconv.FormatInt(last.ts, 10), last.stream, strconv.FormatInt(last.seq, 10))
			break
		}
		size += sz
		out.Events = append(out.Events, filteredLogEvent{
			LogStreamName: k.stream, Timestamp: e.Timestamp, Message: e.Message,
			IngestionTime: e.IngestionTime, EventID: eventID(k),
		})
	}
	for _, st := range streams {
		out.SearchedLogStreams = append(out.SearchedLogStreams, searchedLogStream{st.name, true})
	}
	return out, nil
}

// eventID is a 56-digit identifier, unique per stored event, like the ones AWS returns.
func eventID(k filterKey) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(k.stream))
	return fmt.Sprintf("%020d%020d%016d", k.ts, h.Sum64(), k.seq%1e16)
}
