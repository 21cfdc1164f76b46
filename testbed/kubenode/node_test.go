// SPDX-License-Identifier: Apache-2.0

package kubenode

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Environment of the real-node tests, set by `make e2e-node`.
const (
	envE2ENode  = "OTELCOL_K8S_E2E_NODE"      // "1" runs them
	envKubeBin  = "OTELCOL_K8S_KUBE_BIN"      // bin/kube-local
	envNodeBin  = "OTELCOL_K8S_KUBE_NODE_BIN" // bin/kube-node
	podLogsRoot = "/var/log/pods"
)

// startNode starts the node for a test, or skips the test when the real-node tests are not
// asked for (they need root, containerd and the node binaries). Its clean-up stops the node and
// fails the test when the host is not left as it was.
func startNode(t *testing.T) *Node {
	t.Helper()
	if os.Getenv(envE2ENode) != "1" {
		t.Skip(envE2ENode + "=1 runs the real-node tests (make e2e-node; root, containerd and the node binaries)")
	}
	cfg := Config{KubeLocalBin: os.Getenv(envKubeBin), NodeBin: os.Getenv(envNodeBin), ModuleDir: "."}
	require.NotEmpty(t, cfg.KubeLocalBin, envKubeBin)
	require.NotEmpty(t, cfg.NodeBin, envNodeBin)
	began := time.Now()
	n, err := Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Logf("node Ready after %v (scratch %s)", time.Since(began).Round(100*time.Millisecond), n.Dir())
	t.Cleanup(func() {
		began := time.Now()
		if t.Failed() {
			t.Logf("kubelet log ends with:\n%s", n.Log("kubelet"))
		}
		require.NoError(t, n.Stop(context.Background()), "Stop")
		assert.Empty(t, n.Leftovers(), "the host after Stop")
		t.Logf("node stopped and the host restored in %v", time.Since(began).Round(100*time.Millisecond))
	})
	return n
}

// TestRotation runs the logging workload on the real node at a rate that makes the kubelet
// rotate its log every few seconds (1 MiB, 3 files, checked every 3 s) and checks what the
// kubelet and containerd did: the Pod became Ready through the documented conditions, the
// kubelet rotated 0.log several times (0.log.<time>, then gzip'd), at most three files remain,
// and the files that remain hold, per stream, an unbroken run of numbered lines up to the last
// one written, each once, across every rotation boundary.
func TestRotation(t *testing.T) {
	n := startNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	img := filepath.Join(n.Dir(), "images", "loggen.tar")
	require.NoError(t, BuildGoImage(ctx, ".", "./cmd/loggen", LoggenImage, img))
	require.NoError(t, n.ImportImage(ctx, img))

	// 2,000 lines of 200 bytes a second (about 480 KB/s with the CRI prefix): 0.log passes 1 MiB
	// between two of the kubelet's checks, so each check rotates.
	const perStream = 12000
	pod := loggenPod("rotation", "-rate", "2000", "-size", "200", "-count", strconv.Itoa(perStream))
	pod, err := n.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	created := time.Now()
	require.Eventually(t, func() bool {
		p, err := n.Client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && podReady(p)
	}, 2*time.Minute, 100*time.Millisecond, "the Pod is not Ready")
	t.Logf("Pod Ready %v after create", time.Since(created).Round(100*time.Millisecond))

	dir := filepath.Join(podLogsRoot, fmt.Sprintf("default_%s_%s", pod.Name, pod.UID), "loggen")
	// How the runtime hands over at a rotation, seen by a reader polling every millisecond.
	obsCtx, stopObserving := context.WithCancel(ctx)
	obs := observeRotations(obsCtx, filepath.Join(dir, "0.log"), time.Second)
	rotated := map[string]bool{} // every rotated file name seen
	var mu sync.Mutex
	done := make(chan struct{})
	go func() { // watches the folder while the workload writes
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			entries, _ := os.ReadDir(dir)
			mu.Lock()
			for _, e := range entries {
				if rotatedName.MatchString(e.Name()) {
					rotated[strings.TrimSuffix(e.Name(), ".gz")] = true
				}
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()
	// The workload's last lines are in 0.log or, when a rotation came after them, in the newest
	// rotated file, which the kubelet leaves uncompressed.
	require.Eventually(t, func() bool {
		lines, err := readDir(dir, false)
		if err != nil {
			return false
		}
		seen := 0
		for _, l := range lines {
			if strings.HasPrefix(l.content, fmt.Sprintf("rotation %s %d ", l.stream, perStream)) {
				seen++
			}
		}
		return seen == 2
	}, 2*time.Minute, 200*time.Millisecond, "the workload's last lines never reached the files")
	cancel()
	<-done
	stopObserving()
	late := 0
	for i, lw := range obs.results() {
		if lw.FinalSize > lw.SizeAtNewFile {
			late++
		}
		t.Logf("rotation %d: the renamed file had %d bytes when the new 0.log appeared, %d at the end (+%d bytes, last %v after)",
			i+1, lw.SizeAtNewFile, lw.FinalSize, lw.FinalSize-lw.SizeAtNewFile, lw.LastGrowth.Round(10*time.Microsecond))
	}
	t.Logf("%d rotation(s) wrote to the renamed file after the new 0.log existed", late)

	// The kubelet may rotate while the files are read (0.log can still be over the limit):
	// a file renamed or removed between the listing and its reading makes readDir fail, and it
	// reads again.
	var lines []criLine
	var files []string
	require.Eventually(t, func() bool {
		var err error
		files, err = logFiles(dir)
		if err != nil {
			return false
		}
		lines, err = readDir(dir, true)
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "the log folder could not be read whole")
	t.Logf("rotated files seen: %d; files at the end: %v", len(rotated), files)
	assert.GreaterOrEqual(t, len(rotated), 3, "the kubelet rotated 0.log fewer than three times")
	assert.LessOrEqual(t, len(files), 3, "containerLogMaxFiles is 3")
	gz := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".gz") {
			gz++
		}
	}
	assert.Positive(t, gz, "no rotated file was compressed")

	// Per stream, the lines of the files (oldest first) count up by one from the first line
	// still kept to the last line written: none lost or repeated at a rotation.
	first := map[string]int{}
	next := map[string]int{}
	for _, l := range lines {
		fields := strings.Fields(l.content)
		require.Len(t, fields, 4, "line %q", l.content)
		require.Equal(t, l.stream, fields[1], "a line in the wrong stream")
		seq, err := strconv.Atoi(fields[2])
		require.NoError(t, err)
		if _, ok := next[l.stream]; !ok {
			first[l.stream] = seq
		} else {
			require.Equal(t, next[l.stream], seq, "%s: expected line %d after a rotation or within a file", l.stream, next[l.stream])
		}
		next[l.stream] = seq + 1
	}
	for _, s := range []string{"stdout", "stderr"} {
		assert.Equal(t, perStream+1, next[s], "%s: the last line in the files", s)
		t.Logf("%s: lines %d..%d in the remaining files, unbroken", s, first[s], next[s]-1)
	}
}

func loggenPod(name string, args ...string) *corev1.Pod {
	grace := int64(1)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			HostNetwork:                   true,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name:            "loggen",
				Image:           LoggenImage,
				ImagePullPolicy: corev1.PullNever,
				Args:            append([]string{"-id", name}, args...),
			}},
		},
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// logFiles returns the files of a container's log folder, oldest first: the rotated ones by
// the time in their name, then 0.log.
func logFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var rotated []string
	current := false
	for _, e := range entries {
		switch {
		case e.Name() == "0.log":
			current = true
		case rotatedName.MatchString(e.Name()):
			rotated = append(rotated, e.Name())
		}
	}
	sort.Slice(rotated, func(i, j int) bool {
		return strings.TrimSuffix(rotated[i], ".gz") < strings.TrimSuffix(rotated[j], ".gz")
	})
	if !current {
		return nil, fmt.Errorf("no 0.log in %s", dir)
	}
	return append(rotated, "0.log"), nil
}

// rotatedName matches the kubelet's rotated files: 0.log.<time>, compressed 0.log.<time>.gz
// (not the .tmp file it compresses into).
var rotatedName = regexp.MustCompile(`^0\.log\.[0-9]{8}-[0-9]{6}(\.gz)?$`)

type criLine struct{ file, stream, content string }

// readDir reads the CRI log files of dir, oldest first; compressed ones only when gz.
func readDir(dir string, gz bool) ([]criLine, error) {
	files, err := logFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []criLine
	for _, f := range files {
		if strings.HasSuffix(f, ".gz") && !gz {
			continue
		}
		lines, err := readCRI(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		out = append(out, lines...)
	}
	return out, nil
}

// readCRI reads a CRI log file (gzip'd when its name ends in .gz): "<time> <stream> <P|F> <content>".
// The workload's lines are shorter than the runtime's split size, so every entry is full (F).
func readCRI(path string) ([]criLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		defer func() { _ = zr.Close() }()
		r = zr
	}
	var out []criLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), " ", 4)
		if len(parts) != 4 || parts[2] != "F" {
			return nil, fmt.Errorf("%s: not a full CRI entry: %q", path, sc.Text())
		}
		out = append(out, criLine{file: filepath.Base(path), stream: parts[1], content: parts[3]})
	}
	return out, sc.Err()
}
