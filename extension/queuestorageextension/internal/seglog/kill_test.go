// SPDX-License-Identifier: Apache-2.0

package seglog

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

const (
	killChildEnv = "QUEUE_STORAGE_KILL_CHILD_DIR"
	killLag      = 5
	killSegment  = 16 << 10
)

// killValue is batch i's item: sizes from 100 bytes to a third of a segment.
func killValue(i int) []byte {
	return bytes.Repeat([]byte{byte('a' + i%26)}, 100+(i*977)%(killSegment/3))
}

// TestKill9Child is the child of TestKill9: it writes the queue's batches, from the one after
// the stored metadata's, until it is killed, printing each batch's number once Batch has returned.
func TestKill9Child(t *testing.T) {
	dir := os.Getenv(killChildEnv)
	if dir == "" {
		t.Skip("the child process of TestKill9")
	}
	s, err := Open(dir, Options{SegmentSize: killSegment})
	require.NoError(t, err)
	start := 0
	if meta, err := s.Get("qmv0"); err == nil && meta != nil {
		last, err := strconv.Atoi(string(meta))
		require.NoError(t, err)
		start = last + 1
	}
	for i := start; ; i++ {
		ops := []*storage.Operation{
			storage.SetOperation("qmv0", []byte(strconv.Itoa(i))),
			storage.SetOperation(strconv.Itoa(i), killValue(i)),
		}
		if i >= killLag {
			ops = append(ops, storage.DeleteOperation(strconv.Itoa(i-killLag)))
		}
		require.NoError(t, s.Batch(ops...))
		_, err := fmt.Fprintf(os.Stdout, "ack %d\n", i)
		require.NoError(t, err)
	}
}

// TestKill9 kills a process writing batches (SIGKILL, twice, at different points) and checks
// that every batch it acknowledged is there after recovery and nothing it deleted came back
// (design.md, rules 3, 9, 10).
func TestKill9(t *testing.T) {
	dir := t.TempDir()
	lastAck := -1
	for round, acks := range []int{300, 517} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Child$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		sc := bufio.NewScanner(out)
		n, first := 0, -1
		for sc.Scan() {
			v, ok := strings.CutPrefix(sc.Text(), "ack ")
			if !ok {
				continue
			}
			i, err := strconv.Atoi(v)
			require.NoError(t, err)
			if first < 0 {
				first = i
				// After the stored metadata: the last acknowledged batch or the one after it.
				require.Contains(t, []int{lastAck + 1, lastAck + 2}, first, "round %d", round)
			}
			lastAck = i
			if n++; n == acks {
				require.NoError(t, cmd.Process.Kill())
			}
		}
		// What the child printed before it died is acknowledged too: read to the end.
		require.Error(t, cmd.Wait(), "round %d: the child ended by the kill", round)
		require.GreaterOrEqual(t, n, acks, "round %d: the child stopped early", round)

		s, m := open(t, dir, killSegment)
		meta, err := s.Get("qmv0")
		require.NoError(t, err)
		last, err := strconv.Atoi(string(meta))
		require.NoError(t, err)
		// The batch after the last acknowledged one may be there too, never one later.
		require.Contains(t, []int{lastAck, lastAck + 1}, last, "round %d", round)
		for i := 0; i <= last; i++ {
			got, err := s.Get(strconv.Itoa(i))
			require.NoError(t, err)
			if i > last-killLag {
				require.Equal(t, killValue(i), got, "round %d: item %d", round, i)
			} else {
				require.Nil(t, got, "round %d: item %d was deleted", round, i)
			}
		}
		checkAccounting(t, s, m)
		require.NoError(t, s.Close())
	}
}
