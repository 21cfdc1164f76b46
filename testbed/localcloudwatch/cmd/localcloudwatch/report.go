// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// eventSource returns the last n events of a stream.
type eventSource func(group, stream string, n int) ([]localcloudwatch.Event, error)

// writeReport prints a human-readable overview of a summary: one line per log group,
// its streams, and the last few events of the busiest stream of each group.
func writeReport(w io.Writer, sum localcloudwatch.Summary, events eventSource, perGroup int) error {
	// printf keeps the first write error; writeReport returns it once the report is written.
	var werr error
	printf := func(dst io.Writer, format string, a ...any) {
		if werr == nil {
			_, werr = fmt.Fprintf(dst, format, a...)
		}
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	printf(tw, "%s\n", "LOG GROUP\tCLASS\tRETENTION\tSTREAMS\tEVENTS\tBYTES\tTAGS")
	for _, g := range sum.Groups {
		retention := "never expire"
		if g.RetentionDays > 0 {
			retention = fmt.Sprintf("%d days", g.RetentionDays)
		}
		printf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", g.Name, g.Class, retention, g.Streams, g.Events, g.StoredBytes, pairs(g.Tags, ","))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	st := sum.Stats
	printf(w, "\nPutLogEvents: %d accepted, %d events, %d message bytes; throttled %d; rejected events: %s; errors: %s\n",
		st.PutLogEventsAccepted, st.EventsAccepted, st.MessageBytesAccepted, st.Throttles, pairs(st.RejectedEvents, " "), pairs(st.Errors, " "))
	if st.PutLogEventsAccepted > 0 {
		printf(w, "average batch: %.0f events, %.1f%% of the 1 MiB limit\n",
			float64(st.BatchEvents)/float64(st.PutLogEventsAccepted),
			100*float64(st.BatchBytes)/float64(st.PutLogEventsAccepted)/1_048_576)
	}
	if perGroup <= 0 || events == nil {
		return werr
	}
	for _, g := range sum.Groups {
		var busiest *localcloudwatch.StreamInfo
		for i := range g.StreamList {
			if busiest == nil || g.StreamList[i].Events > busiest.Events {
				busiest = &g.StreamList[i]
			}
		}
		if busiest == nil || busiest.Events == 0 {
			continue
		}
		evs, err := events(g.Name, busiest.Name, perGroup)
		if err != nil {
			return err
		}
		printf(w, "\n%s / %s (last %d of %d events):\n", g.Name, busiest.Name, len(evs), busiest.Events)
		for _, e := range evs {
			printf(w, "  %s  %s\n", time.UnixMilli(e.Timestamp).UTC().Format(time.RFC3339Nano), e.Message)
		}
	}
	return werr
}

// pairs formats a map as sorted key=value pairs, "none" when empty.
func pairs[V any](m map[string]V, sep string) string {
	if len(m) == 0 {
		return "none"
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(kv, sep)
}

// httpReport fetches the summary and events of a running server and prints the report.
func httpReport(w io.Writer, endpoint string, perGroup int) error {
	endpoint = strings.TrimSuffix(endpoint, "/")
	var sum localcloudwatch.Summary
	if err := getJSON(endpoint+"/local/summary", &sum); err != nil {
		return err
	}
	events := func(group, stream string, n int) ([]localcloudwatch.Event, error) {
		var evs []localcloudwatch.Event
		q := url.Values{"group": {group}, "stream": {stream}, "limit": {strconv.Itoa(n)}}
		return evs, getJSON(endpoint+"/local/events?"+q.Encode(), &evs)
	}
	return writeReport(w, sum, events, perGroup)
}

func getJSON(u string, v any) error {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }() // read-only
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, strings.TrimSpace(string(b)))
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
