// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/kubenode"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// workNamespace holds the scenarios' workloads, apart from the product's namespace.
const workNamespace = "work"

// loggen is one logging Pod of a scenario: what it writes (testbed/kubenode/cmd/loggen) is
// known exactly, lines per stream numbered from 1.
type loggen struct {
	name    string
	streams []string // "stdout", "stderr"
	lines   int      // per stream
}

// loggenPod is the Pod that runs cmd/loggen as id writing count lines per stream at rate lines/s
// (both streams together) of size bytes, then idling until deleted.
func loggenPod(name string, rate, size, count int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workNamespace, Labels: map[string]string{"app": "loggen"}},
		Spec: corev1.PodSpec{
			HostNetwork:                   true,
			TerminationGracePeriodSeconds: new(int64),
			Containers: []corev1.Container{{
				Name: "loggen", Image: kubenode.LoggenImage, ImagePullPolicy: corev1.PullNever,
				Args: []string{"-id", name, "-rate", strconv.Itoa(rate), "-size", strconv.Itoa(size), "-count", strconv.Itoa(count)},
			}},
		},
	}
}

// ensureWorkNamespace creates the workloads' namespace once.
func ensureWorkNamespace(t *testing.T, e *env) {
	t.Helper()
	_, err := e.node.Client.CoreV1().Namespaces().Get(context.Background(), workNamespace, metav1.GetOptions{})
	if err == nil {
		return
	}
	_, err = e.node.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workNamespace}}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// lineRE finds a loggen line in a stored message: "<id> <stream> <seq> <padding>".
var lineRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9-])([a-z0-9][a-z0-9-]*) (stdout|stderr) ([0-9]+) x*`)

// endRE finds the line loggen writes per stream when it is stopped: "<id> <stream> end <n>".
var endRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9-])([a-z0-9][a-z0-9-]*) (stdout|stderr) end ([0-9]+)`)

// tally is what the local server stored of the scenario's workloads.
type tally struct {
	copies  map[string]map[int]int     // "<id> <stream>" -> seq -> copies stored
	ends    map[string]int             // "<id> <stream>" -> lines written, from its end line
	streams map[string]map[string]bool // "<id> <stream>" -> "<group> <stream>" it arrived in
	stored  int
}

// storedEvent is an event the local server holds, with its group and stream.
type storedEvent struct {
	group, stream string
	localcloudwatch.Event
}

// storedEvents reads every event the local server holds; on an error it returns what it read
// and the first error.
func (e *env) storedEvents() ([]storedEvent, error) {
	var out []storedEvent
	var first error
	for _, g := range e.srv.Groups() {
		streams, err := e.srv.Streams(g.Name)
		if err != nil {
			first = cmp.Or(first, err)
			continue
		}
		for _, s := range streams {
			evs, err := e.srv.Events(g.Name, s.Name)
			if err != nil {
				first = cmp.Or(first, err)
				continue
			}
			for _, ev := range evs {
				out = append(out, storedEvent{group: g.Name, stream: s.Name, Event: ev})
			}
		}
	}
	return out, first
}

// mustStored is storedEvents for a test, which fails on an error.
func mustStored(t *testing.T, e *env) []storedEvent {
	t.Helper()
	evs, err := e.storedEvents()
	require.NoError(t, err)
	return evs
}

// countStored reads every event the local server holds and counts the lines of the given ids.
func countStored(t *testing.T, e *env, ids map[string]bool) tally {
	t.Helper()
	tl := tally{copies: map[string]map[int]int{}, ends: map[string]int{}, streams: map[string]map[string]bool{}}
	for _, ev := range mustStored(t, e) {
		l, ok := parseLoggen(ev.Message)
		if !ok || !ids[l.id] {
			continue
		}
		key := l.id + " " + l.stream
		if l.end {
			tl.ends[key] = l.seq
			continue
		}
		if tl.copies[key] == nil {
			tl.copies[key] = map[int]int{}
			tl.streams[key] = map[string]bool{}
		}
		tl.copies[key][l.seq]++
		tl.streams[key][ev.group+" "+ev.stream] = true
		tl.stored++
	}
	return tl
}

// loggenLine is a loggen line found in a stored message.
type loggenLine struct {
	id, stream string
	seq        int  // the line's number, or for an end line the lines written
	end        bool // "<id> <stream> end <n>"
}

// parseLoggen finds in msg what endRE (first) and then lineRE find, without a regular
// expression: a full accounting parses every stored event, and the two patterns' scans took
// seconds over the throughput scenario's 200,000 events. FuzzParseLoggen checks it against
// the patterns.
func parseLoggen(msg string) (loggenLine, bool) {
	var line loggenLine
	found := false
	for i := 0; i < len(msg); {
		j := strings.Index(msg[i:], " std")
		if j < 0 {
			break
		}
		at := i + j
		i = at + 1
		var stream string
		switch {
		case strings.HasPrefix(msg[at:], " stdout "):
			stream = "stdout"
		case strings.HasPrefix(msg[at:], " stderr "):
			stream = "stderr"
		default:
			continue
		}
		start := at
		for start > 0 && isIDByte(msg[start-1]) {
			start--
		}
		if start == at || msg[start] == '-' || (start > 0 && isWordByte(msg[start-1])) {
			continue
		}
		rest := msg[at+len(" stdout "):]
		if n, ok := strings.CutPrefix(rest, "end "); ok {
			if d := leadingDigits(n); d > 0 {
				seq, _ := strconv.Atoi(n[:d])
				return loggenLine{id: msg[start:at], stream: stream, seq: seq, end: true}, true
			}
		}
		if found {
			continue // an end line later in the message still wins, as endRE is tried first
		}
		if d := leadingDigits(rest); d > 0 && d < len(rest) && rest[d] == ' ' {
			seq, _ := strconv.Atoi(rest[:d])
			line, found = loggenLine{id: msg[start:at], stream: stream, seq: seq}, true
		}
	}
	return line, found
}

// isIDByte is a byte of a loggen id ([a-z0-9-]); isWordByte one that may not precede an id
// ([A-Za-z0-9-]).
func isIDByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' }

func isWordByte(c byte) bool { return isIDByte(c) || c >= 'A' && c <= 'Z' }

func leadingDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// account is the exact accounting of a scenario: every written line, how many arrived once,
// how many never, how many more than once.
type account struct {
	written, once, missing, duplicates int
	examples                           []string
}

func (a account) String() string {
	s := fmt.Sprintf("written %d, arrived once %d, missing %d, duplicate copies %d", a.written, a.once, a.missing, a.duplicates)
	if len(a.examples) > 0 {
		s += "\n  " + strings.Join(a.examples, "\n  ")
	}
	return s
}

// reconcile compares what the workloads wrote with the tally.
func reconcile(ws []loggen, tl tally) account {
	var a account
	for _, w := range ws {
		for _, s := range w.streams {
			key := w.name + " " + s
			var missing []int
			for seq := 1; seq <= w.lines; seq++ {
				a.written++
				switch n := tl.copies[key][seq]; {
				case n == 0:
					a.missing++
					missing = append(missing, seq)
				case n > 1:
					a.duplicates += n - 1
					a.once++
				default:
					a.once++
				}
			}
			if len(missing) > 0 && len(a.examples) < 10 {
				a.examples = append(a.examples, fmt.Sprintf("%s: %d missing, first %v", key, len(missing), missing[:min(len(missing), 5)]))
			}
		}
	}
	return a
}

// waitAccount waits until every written line arrived or the time is up, and returns the final
// accounting and tally.
//
// The full accounting copies every event the local server holds and matches each message
// against the line patterns: with the 200,000 lines of the throughput scenario (and what the
// earlier scenarios left) one such pass took seconds of the test's CPU on the shared node, so
// polling with it every second saw a delivery up to one pass late and took CPU from the
// agent under test. Between full passes it therefore waits on the stored event counts of the
// workloads' streams (no event copied): a full pass runs once they hold the written lines,
// and at least every fullPassEvery anyway (for streams named without the Pod, or lines a
// multi-line rule joined).
func waitAccount(t *testing.T, e *env, ws []loggen, within time.Duration) (account, tally) {
	t.Helper()
	ids := map[string]bool{}
	want := int64(0)
	for _, w := range ws {
		ids[w.name] = true
		want += int64(w.lines * len(w.streams))
	}
	deadline := time.Now().Add(within)
	lastFull := time.Time{}
	for {
		if now := time.Now(); storedOf(e, ws) >= want || now.Sub(lastFull) >= fullPassEvery || now.After(deadline) {
			lastFull = now
			tl := countStored(t, e, ids)
			a := reconcile(ws, tl)
			if a.missing == 0 || time.Now().After(deadline) {
				return a, tl
			}
		}
		time.Sleep(countPollEvery)
	}
}

// How often waitAccount looks at the stored counts, and the longest it goes without a full
// accounting.
const (
	countPollEvery = 200 * time.Millisecond
	fullPassEvery  = 5 * time.Second
)

// storedOf is the number of events the local server holds in streams named after one of the
// workloads' Pods (the shipped stream name holds "_<pod>_"), from the streams' counts only.
func storedOf(e *env, ws []loggen) int64 {
	n := int64(0)
	for _, g := range e.srv.Groups() {
		streams, err := e.srv.Streams(g.Name)
		if err != nil {
			continue
		}
		for _, s := range streams {
			for _, w := range ws {
				if strings.Contains(s.Name, "_"+w.name+"_") {
					n += s.Events
					break
				}
			}
		}
	}
	return n
}

// runPods creates the Pods and waits until each has written all its lines (its container's
// log holds its last line per stream, read through the API as a user would).
func runPods(t *testing.T, e *env, pods []*corev1.Pod, ws []loggen, within time.Duration) {
	t.Helper()
	ensureWorkNamespace(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for _, p := range pods {
		_, err := e.node.Client.CoreV1().Pods(workNamespace).Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	t.Cleanup(func() { deletePods(t, e, pods) })
	for _, w := range ws {
		require.Eventually(t, func() bool {
			p, err := e.node.Client.CoreV1().Pods(workNamespace).Get(ctx, w.name, metav1.GetOptions{})
			if err != nil || len(p.Status.ContainerStatuses) == 0 {
				return false
			}
			if p.Status.Phase != corev1.PodRunning {
				return false
			}
			// The workload has written everything when its last line per stream is in its
			// log files: 0.log, or the newest rotated file, which the kubelet leaves plain.
			// (The API's log endpoint would go to the kubelet's address, which is not loopback.)
			files, _ := filepath.Glob(filepath.Join("/var/log/pods", workNamespace+"_"+w.name+"_"+string(p.UID), "loggen", "*.log*"))
			done := 0
			for _, s := range w.streams {
				last := fmt.Sprintf(" %s %s %d ", w.name, s, w.lines)
				for _, f := range files {
					if strings.HasSuffix(f, ".gz") {
						continue
					}
					if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), last) {
						done++
						break
					}
				}
			}
			return done == len(w.streams)
		}, within, time.Second, "%s never wrote its last lines", w.name)
	}
}

// deletePods deletes the Pods and waits until they are gone.
func deletePods(t *testing.T, e *env, pods []*corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	for _, p := range pods {
		_ = e.node.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	}
	require.Eventually(t, func() bool {
		for _, p := range pods {
			if _, err := e.node.Client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{}); err == nil {
				return false
			}
		}
		return true
	}, 2*time.Minute, 500*time.Millisecond)
}

// sortedKeys lists a set.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
