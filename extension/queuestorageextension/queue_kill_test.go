// SPDX-License-Identifier: Apache-2.0

package queuestorageextension

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/pdata/plog"
)

const (
	queueChildDirEnv   = "QUEUE_STORAGE_QUEUE_CHILD_DIR"
	queueChildStartEnv = "QUEUE_STORAGE_QUEUE_CHILD_START"
)

// TestQueueKillChild is the child of TestQueueKill9: exporterhelper's persistent queue over
// queue_storage, a sink that prints "delivered <id>" for every record it takes (about 1,000 a
// second, so that the queue fills), and, unless its start is -1, a producer that queues item
// after item from its start, printing "queued <id>" once the queue has taken each.
func TestQueueKillChild(t *testing.T) {
	dir := os.Getenv(queueChildDirEnv)
	if dir == "" {
		t.Skip("the child process of TestQueueKill9")
	}
	start, err := strconv.Atoi(os.Getenv(queueChildStartEnv))
	require.NoError(t, err)
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		_, err := fmt.Fprintf(os.Stdout, format+"\n", args...)
		require.NoError(t, err)
	}
	pace := time.NewTicker(time.Millisecond)
	push := func(_ context.Context, ld plog.Logs) error {
		<-pace.C
		rls := ld.ResourceLogs()
		for i := range rls.Len() {
			lrs := rls.At(i).ScopeLogs().At(0).LogRecords()
			for k := range lrs.Len() {
				id, _, _ := strings.Cut(lrs.At(k).Body().Str(), "|")
				say("delivered %s", id)
			}
		}
		return nil
	}
	id, ext := startQueueStorage(t, dir, 16<<10)
	exp := startQueue(t, id, ext, push, true, configretry.NewDefaultBackOffConfig())
	say("started")
	if start < 0 {
		select {} // deliver until killed
	}
	for i := start; ; i++ {
		require.NoError(t, exp.ConsumeLogs(context.Background(), logOf("item-"+strconv.Itoa(i))))
		say("queued item-%d", i)
	}
}

// TestQueueKill9 kills a collector's persistent queue over queue_storage (SIGKILL) twice while
// items are queued and delivered, then lets a third run deliver what is left: every item the
// queue took is delivered, and an item is delivered twice only when it was being sent at a
// kill (exporterhelper removes an item after its send).
func TestQueueKill9(t *testing.T) {
	dir := t.TempDir()
	queued := map[string]bool{}
	delivered := map[string]int{}
	next := 0
	run := func(start int, until func() bool) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestQueueKillChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), queueChildDirEnv+"="+dir, queueChildStartEnv+"="+strconv.Itoa(start))
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		sc := bufio.NewScanner(out)
		killed := false
		for sc.Scan() {
			switch what, id, _ := strings.Cut(sc.Text(), " "); what {
			case "queued":
				queued[id] = true
				n, err := strconv.Atoi(strings.TrimPrefix(id, "item-"))
				require.NoError(t, err)
				next = max(next, n+1)
			case "delivered":
				delivered[id]++
			}
			if !killed && until() {
				require.NoError(t, cmd.Process.Kill())
				killed = true
			}
		}
		require.Error(t, cmd.Wait(), "the child ended by the kill")
	}
	for round := range 2 {
		before := len(queued)
		// killed once 800 more are queued and more than 20 of them wait (a loaded machine may
		// queue slower than the sink takes them for a while)
		run(next, func() bool {
			return len(queued) >= before+800 && len(queued)-countDelivered(queued, delivered) > 20
		})
		require.Greater(t, len(queued)-countDelivered(queued, delivered), 20, "round %d: items were waiting in the queue at the kill", round)
	}
	run(-1, func() bool { return countDelivered(queued, delivered) == len(queued) })

	twice := 0
	for id := range queued {
		require.Positive(t, delivered[id], "%s was queued", id)
		twice += delivered[id] - 1
	}
	// Per kill: the items being sent, and the one being queued when stored but not yet
	// acknowledged (the next run queues an item of the same id again).
	require.LessOrEqual(t, twice, 2*(queueConsumers+1), "items delivered twice")
	// Everything delivered: no item segment is left.
	require.LessOrEqual(t, len(segmentFiles(t, dir)), 2)
}

func countDelivered(queued map[string]bool, delivered map[string]int) int {
	n := 0
	for id := range queued {
		if delivered[id] > 0 {
			n++
		}
	}
	return n
}
