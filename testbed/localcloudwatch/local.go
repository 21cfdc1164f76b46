// SPDX-License-Identifier: Apache-2.0

package localcloudwatch

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Summary is the state overview served at GET /local/summary.
type Summary struct {
	Groups []GroupSummary `json:"groups"`
	Stats  Stats          `json:"stats"`
	Faults Faults         `json:"faults"`
}

// GroupSummary is a log group and its streams.
type GroupSummary struct {
	GroupInfo
	StreamList []StreamInfo `json:"streamList"`
}

// Summary returns every group with its streams, the counters and the faults in effect.
func (s *Server) Summary() Summary {
	out := Summary{Groups: []GroupSummary{}, Stats: s.Stats(), Faults: s.Faults()}
	for _, g := range s.Groups() {
		streams, err := s.Streams(g.Name)
		if err != nil { // deleted between the two reads
			continue
		}
		out.Groups = append(out.Groups, GroupSummary{GroupInfo: g, StreamList: streams})
	}
	return out
}

// serveLocal serves the inspection and control endpoints:
//
//	GET  /local/summary                             groups, streams, counters, faults
//	GET  /local/events?group=G&stream=S[&limit=N]   the last N (default 20, 0: all) stored events
//	GET  /local/faults                              the faults in effect
//	POST /local/faults                              replace the faults (JSON Faults)
//	POST /local/reset                               delete all groups, zero the counters
func (s *Server) serveLocal(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/local/summary" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.Summary())
	case r.URL.Path == "/local/events" && r.Method == http.MethodGet:
		q := r.URL.Query()
		limit := 20
		if v := q.Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "limit must be 0 (all) or a positive integer"})
				return
			}
			limit = n
		}
		events, err := s.Events(q.Get("group"), q.Get("stream"))
		if err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
			return
		}
		if limit > 0 {
			events = events[max(0, len(events)-limit):]
		}
		writeJSON(w, http.StatusOK, events)
	case r.URL.Path == "/local/faults" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.Faults())
	case r.URL.Path == "/local/faults" && r.Method == http.MethodPost:
		var f Faults
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "faults: " + err.Error()})
			return
		}
		if err := s.SetFaults(f); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, s.Faults())
	case r.URL.Path == "/local/reset" && r.Method == http.MethodPost:
		s.Reset()
		writeJSON(w, http.StatusOK, map[string]string{"status": "reset"})
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "unknown endpoint " + r.Method + " " + r.URL.Path})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
