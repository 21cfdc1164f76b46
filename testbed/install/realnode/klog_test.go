// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"encoding/json"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// klogRecordRE finds loggen's multi-line klog record in a stored message by its id value.
var klogRecordRE = regexp.MustCompile(`([a-z0-9-]+) (stdout|stderr) klog ([0-9]+)`)

// klogMessage is the part of a stored message this scenario reads.
type klogMessage struct {
	Body       string         `json:"body"`
	Severity   string         `json:"severity_text"`
	Attributes map[string]any `json:"attributes"`
}

// TestKlogJoined: a Pod that logs the way Kubernetes components do (loggen -format klog:
// every line a klog text record, I on stdout and E on stderr, and every 50 lines a structured
// record whose diff value spans five physical lines) arrives through the shipped node
// pipeline as one event per klog record: the multi-line record joined by the multi-line
// preset and parsed by klog_parser (message, severity, source location, the multi-line value
// as one string), every numbered line once and never glued to a neighbor.
func TestKlogJoined(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	const perStream, every = 1000, 50
	p := loggenPod("klogger", 200, lineSize, perStream)
	p.Spec.Containers[0].Args = append(p.Spec.Containers[0].Args, "-format", "klog", "-klog", strconv.Itoa(every))
	ws := []loggen{{name: p.Name, streams: []string{"stdout", "stderr"}, lines: perStream}}
	runPods(t, e, []*corev1.Pod{p}, ws, 2*time.Minute)
	a, _ := waitAccount(t, e, ws, time.Minute)
	assert.Zero(t, a.missing, "numbered lines lost: %s", a)
	assert.Zero(t, a.duplicates)

	want := 2 * perStream / every
	records := map[string]int{}
	var wrong []string
	numbered, unparsed := 0, 0
	require.Eventually(t, func() bool {
		records, wrong, numbered, unparsed = map[string]int{}, wrong[:0], 0, 0
		evs, _ := e.storedEvents() // what could be read; the next round reads again
		for _, ev := range evs {
			var m klogMessage
			if json.Unmarshal([]byte(ev.Message), &m) != nil {
				continue
			}
			severity := map[string]string{"stdout": "INFO", "stderr": "ERROR"}
			if l := lineRE.FindStringSubmatch(m.Body); l != nil && l[1] == p.Name {
				numbered++
				if m.Severity != severity[l[2]] || m.Attributes["code.file.path"] != "loggen.go" {
					unparsed++
				}
				continue
			}
			id, _ := m.Attributes["id"].(string)
			k := klogRecordRE.FindStringSubmatch(id)
			if k == nil || k[1] != p.Name {
				continue
			}
			records[id]++
			if m.Body != "Reconciled" || m.Severity != severity[k[2]] ||
				m.Attributes["diff"] != "-replicas: 2\n+replicas: 3\n image: loggen" || lineRE.MatchString(ev.Message) {
				wrong = append(wrong, ev.Message)
			}
		}
		return len(records) == want
	}, time.Minute, time.Second, "klog records stored: %d of %d", len(records), want)
	for id, n := range records {
		assert.Equal(t, 1, n, "klog record %q stored %d times", id, n)
	}
	assert.Empty(t, wrong, "klog records not joined into exactly their own lines or not parsed")
	assert.Zero(t, unparsed, "numbered klog lines without their severity or source location")
	t.Logf("%d numbered klog lines once (%d parsed as JSON messages); %d multi-line klog records, each one event with its value joined",
		a.once, numbered, len(records))
}
