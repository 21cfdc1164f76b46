// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

type streamInput struct {
	LogGroupName  *string `json:"logGroupName"`
	LogStreamName *string `json:"logStreamName"`
}

// lookupStream validates the logStreamName member and returns the stream of g.
func lookupStream(g *logGroup, name *string) (*logStream, *apiError) {
	if err := required(name, "logStreamName"); err != nil {
		return nil, err
	}
	if err := validateStreamName(*name, "logStreamName"); err != nil {
		return nil, err
	}
	st, ok := g.streams[*name]
	if !ok || !visible(st.visibleAt) {
		return nil, errStreamNotFound
	}
	return st, nil
}

func (s *Server) createLogStream(in *streamInput) (any, *apiError) {
	if err := required(in.LogStreamName, "logStreamName"); err != nil {
		return nil, err
	}
	if err := validateStreamName(*in.LogStreamName, "logStreamName"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.lookupGroup(in.LogGroupName)
	if err != nil {
		return nil, err
	}
	if _, ok := g.streams[*in.LogStreamName]; ok {
		return nil, errStreamExists
	}
	st := &logStream{name: *in.LogStreamName, created: s.nowMillis(), sorted: true}
	if s.cfg.CreationDelay > 0 {
		st.visibleAt = time.Now().Add(s.cfg.CreationDelay)
	}
	g.streams[*in.LogStreamName] = st
	return empty{}, nil
}

func (s *Server) deleteLogStream(in *streamInput) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.lookupGroup(in.LogGroupName)
	if err != nil {
		return nil, err
	}
	st, err := lookupStream(g, in.LogStreamName)
	if err != nil {
		return nil, err
	}
	delete(g.streams, st.name)
	return empty{}, nil
}

type describeLogStreamsInput struct {
	LogGroupName        *string `json:"logGroupName"`
	LogGroupIdentifier  *string `json:"logGroupIdentifier"`
	LogStreamNamePrefix *string `json:"logStreamNamePrefix"`
	OrderBy             *string `json:"orderBy"`
	Descending          *bool   `json:"descending"`
	NextToken           *string `json:"nextToken"`
	Limit               *int32  `json:"limit"`
}

type logStreamOut struct {
	LogStreamName       string `json:"logStreamName"`
	CreationTime        int64  `json:"creationTime"`
	FirstEventTimestamp int64  `json:"firstEventTimestamp,omitempty"`
	LastEventTimestamp  int64  `json:"lastEventTimestamp,omitempty"`
	LastIngestionTime   int64  `json:"lastIngestionTime,omitempty"`
	UploadSequenceToken string `json:"uploadSequenceToken"`
	Arn                 string `json:"arn"`
	StoredBytes         int64  `json:"storedBytes"`
}

// streamKey orders streams for DescribeLogStreams: by name, or by last event time
// with the name breaking ties.
type streamKey struct {
	t    int64
	name string
}

func (s *Server) describeLogStreams(in *describeLogStreamsInput) (any, *apiError) {
	limit, err := limitParam(in.Limit, 50, 50)
	if err != nil {
		return nil, err
	}
	byTime := false
	if in.OrderBy != nil {
		switch *in.OrderBy {
		case "LogStreamName":
		case "LastEventTime":
			byTime = true
		default:
			return nil, constraintError(*in.OrderBy, "orderBy", "Member must satisfy enum value set: [LogStreamName, LastEventTime]")
		}
	}
	if byTime && in.LogStreamNamePrefix != nil {
		return nil, invalidParam("Cannot order by LastEventTime with a logStreamNamePrefix.")
	}
	if in.LogStreamNamePrefix != nil {
		if err := validateStreamName(*in.LogStreamNamePrefix, "logStreamNamePrefix"); err != nil {
			return nil, err
		}
	}
	desc := in.Descending != nil && *in.Descending
	var after *streamKey
	if in.NextToken != nil {
		parts, ok := parsePageToken(*in.NextToken, "streams", 2)
		if !ok {
			return nil, errBadToken
		}
		t, perr := strconv.ParseInt(parts[0], 10, 64)
		if perr != nil {
			return nil, errBadToken
		}
		after = &streamKey{t, parts[1]}
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	g, aerr := s.lookupGroupByNameOrID(in.LogGroupName, in.LogGroupIdentifier)
	if aerr != nil {
		return nil, aerr
	}
	keyOf := func(st *logStream) streamKey {
		if byTime {
			return streamKey{st.last, st.name}
		}
		return streamKey{0, st.name}
	}
	compare := func(a, b streamKey) int {
		c := cmp.Or(cmp.Compare(a.t, b.t), strings.Compare(a.name, b.name))
		if desc {
			return -c
		}
		return c
	}
	streams := slices.SortedFunc(maps.Values(g.streams), func(a, b *logStream) int {
		return compare(keyOf(a), keyOf(b))
	})
	page := []logStreamOut{}
	next := ""
	for _, st := range streams {
		k := keyOf(st)
		if after != nil && compare(k, *after) <= 0 {
			continue
		}
		if in.LogStreamNamePrefix != nil && !strings.HasPrefix(st.name, *in.LogStreamNamePrefix) || !visible(st.visibleAt) {
			continue
		}
		if len(page) == limit {
			last := keyOf(g.streams[page[len(page)-1].LogStreamName])
			next = pageToken("streams", strconv.FormatInt(last.t, 10), last.name)
			break
		}
		o := logStreamOut{
			LogStreamName: st.name, CreationTime: st.created,
			UploadSequenceToken: fmt.Sprintf("%056d", st.count), Arn: s.streamARN(g.name, st.name),
			StoredBytes: st.storedBytes,
		}
		if st.count > 0 {
			o.FirstEventTimestamp, o.LastEventTimestamp, o.LastIngestionTime = st.first, st.last, st.lastIngestion
		}
		page = append(page, o)
	}
	return struct {
		LogStreams []logStreamOut `json:"logStreams"`
		NextToken  string         `json:"nextToken,omitempty"`
	}{page, next}, nil
}
