// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// traceHeaderRE finds the first line of a loggen stack trace: "<id> <stream> trace <k>".
var traceHeaderRE = regexp.MustCompile(`IllegalStateException: ([a-z0-9-]+) (stdout|stderr) trace ([0-9]+)`)

// TestStackTracesJoined: a Pod's Java stack traces (loggen -traces, eight lines each, cause
// and elided frames included) between its numbered lines arrive joined by the shipped
// multi-line preset: one CloudWatch event per trace holding all of its lines, never glued to
// a numbered line or another trace, and every numbered line once.
func TestStackTracesJoined(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	const perStream, every = 1000, 50
	p := loggenPod("stacktraces", 200, lineSize, perStream)
	p.Spec.Containers[0].Args = append(p.Spec.Containers[0].Args, "-traces", strconv.Itoa(every))
	ws := []loggen{{name: p.Name, streams: []string{"stdout", "stderr"}, lines: perStream}}
	runPods(t, e, []*corev1.Pod{p}, ws, 2*time.Minute)
	a, _ := waitAccount(t, e, ws, time.Minute)
	assert.Zero(t, a.missing, "numbered lines lost: %s", a)
	assert.Zero(t, a.duplicates)

	want := 2 * perStream / every
	traces := map[string]int{}
	var broken []string
	require.Eventually(t, func() bool {
		traces, broken = map[string]int{}, broken[:0]
		evs, _ := e.storedEvents() // what could be read; the next round reads again
		for _, ev := range evs {
			heads := traceHeaderRE.FindAllStringSubmatch(ev.Message, -1)
			if len(heads) == 0 || heads[0][1] != p.Name {
				continue
			}
			key := heads[0][2] + " " + heads[0][3]
			traces[key]++
			whole := strings.Contains(ev.Message, "OrderController.post") && strings.Contains(ev.Message, "Caused by: java.io.IOException") &&
				strings.Contains(ev.Message, "Pool.borrow") && strings.Contains(ev.Message, "... 12 more")
			if len(heads) > 1 || !whole || lineRE.MatchString(ev.Message) {
				broken = append(broken, key)
			}
		}
		return len(traces) == want
	}, time.Minute, time.Second, "stack traces stored: %v", traces)
	for k, n := range traces {
		assert.Equal(t, 1, n, "trace %s stored %d times", k, n)
	}
	assert.Empty(t, broken, "traces not joined into exactly their own lines")
	t.Logf("%d numbered lines once; %d stack traces of 8 lines, each one event", a.once, len(traces))
}
