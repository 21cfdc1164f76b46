// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// Report prints the groups and streams srv holds, with the last perGroup events of each group's
// busiest stream. Write errors are ignored: the report is meant for a terminal.
func Report(w io.Writer, srv *localcloudwatch.Server, perGroup int) {
	groups := srv.Groups()
	sort.Slice(groups, func(i, j int) bool { return groups[i].Name < groups[j].Name })
	var events int64
	var streams int
	for _, g := range groups {
		events += g.Events
		streams += g.Streams
	}
	st := srv.Stats()
	_, _ = fmt.Fprintf(w, "local CloudWatch Logs: %d log groups, %d streams, %d events (%d PutLogEvents calls, %d throttled, %d rejected events)\n",
		len(groups), streams, events, st.PutLogEventsAccepted, st.Throttles, sumValues(st.RejectedEvents))
	for _, g := range groups {
		_, _ = fmt.Fprintf(w, "\n%s  (%d streams, %d events, %d bytes)\n", g.Name, g.Streams, g.Events, g.StoredBytes)
		list, err := srv.Streams(g.Name)
		if err != nil || len(list) == 0 {
			continue
		}
		sort.SliceStable(list, func(i, j int) bool { return list[i].Events > list[j].Events })
		for i, s := range list {
			if i == 5 {
				_, _ = fmt.Fprintf(w, "    ... %d more streams\n", len(list)-5)
				break
			}
			_, _ = fmt.Fprintf(w, "    %6d  %s\n", s.Events, s.Name)
		}
		evs, err := srv.Events(g.Name, list[0].Name)
		if err != nil || perGroup <= 0 {
			continue
		}
		if len(evs) > perGroup {
			evs = evs[len(evs)-perGroup:]
		}
		_, _ = fmt.Fprintf(w, "  last %d events of %s:\n", len(evs), list[0].Name)
		for _, e := range evs {
			_, _ = fmt.Fprintf(w, "    %s %s\n", time.UnixMilli(e.Timestamp).UTC().Format("15:04:05.000"), shorten(e.Message, 400))
		}
	}
}

func sumValues(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// Shorten cuts s to about n bytes (on a rune boundary), saying how much was left out.
func Shorten(s string, n int) string { return shorten(s, n) }

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…(%d more bytes)", len(s)-cut)
}

// Stored is the number of events srv holds.
func Stored(srv *localcloudwatch.Server) int64 {
	var n int64
	for _, g := range srv.Groups() {
		n += g.Events
	}
	return n
}

// WaitStored waits until srv holds at least want events, or until ctx ends, or until the
// collector exits (when c is not nil). It returns the count it saw last.
func WaitStored(ctx context.Context, srv *localcloudwatch.Server, want int64, c *Collector) (int64, error) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		n := Stored(srv)
		if n >= want {
			return n, nil
		}
		if c != nil {
			if exited, err := c.Exited(); exited {
				return n, fmt.Errorf("%w: %v", ErrExited, err) //nolint:errorlint // err is nil after a clean exit, which %w would print as %!w(<nil>)
			}
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-t.C:
		}
	}
}

// Indent prefixes every line of s.
func Indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
