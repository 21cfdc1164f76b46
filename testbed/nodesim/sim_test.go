// SPDX-License-Identifier: Apache-2.0

package nodesim

import (
	"bufio"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	criLine   = regexp.MustCompile(`^(\S+) (stdout|stderr) ([PF]) (.*)$`)
	rotatedRE = regexp.MustCompile(`^[0-9]+\.log\.[0-9]{8}-[0-9]{6}(\.gz)?$`)
	tokenRE   = regexp.MustCompile(`nodesim:(c[0-9]+):([0-9]+)`)
)

func readAll(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read-only
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return lines
}

// TestRunWritesKubeletLayout runs a small fast node and checks every file against what kubelet
// and containerd produce, and every token of every surviving container exactly once, in order.
func TestRunWritesKubeletLayout(t *testing.T) {
	root := t.TempDir()
	sim, err := New(Config{
		Root: root, Seed: 7, Pods: 4,
		Phases:             []Phase{{Duration: 1500 * time.Millisecond, LinesPerSecond: 2000}},
		ShortPodsPerSecond: 4, PodDeleteDelay: 200 * time.Millisecond,
		Mix:         Mix{KlogText: 1, KlogJSON: 1, Plain: 1, Long: 0.05, Malformed: 0.02},
		RotateBytes: 64 << 10, RotateCheck: 100 * time.Millisecond, KeepFiles: 50,
	})
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := sim.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ledger.Rotations == 0 || ledger.Compressed == 0 || ledger.PodsDeleted == 0 {
		t.Fatalf("expected rotations, compression and deleted pods: %+v", ledger)
	}
	seen := map[string][]int64{}
	formats := map[Format]bool{}
	for _, c := range ledger.Containers {
		formats[c.Format] = true
		dir := filepath.Join(sim.PodsDir(), c.Namespace+"_"+c.Pod+"_"+c.UID, c.Container)
		entries, err := os.ReadDir(dir)
		if c.Deleted {
			if !os.IsNotExist(err) {
				t.Errorf("%s: deleted pod's directory still there (%v)", c.ID, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		// Read oldest first: rotated names sort by time, the current file comes last.
		var names []string
		for _, e := range entries {
			if e.Name() == "0.log" {
				continue
			}
			if !rotatedRE.MatchString(e.Name()) {
				t.Errorf("%s: unexpected file %s", c.ID, e.Name())
			}
			names = append(names, e.Name())
		}
		names = append(names, "0.log")
		partial := false
		for _, name := range names {
			for _, line := range readAll(t, filepath.Join(dir, name)) {
				m := criLine.FindStringSubmatch(line)
				if m == nil {
					if !strings.HasPrefix(line, "garbage without a CRI header") {
						t.Errorf("%s: not a CRI line: %.100q", c.ID, line)
					}
				} else {
					if _, err := time.Parse(time.RFC3339Nano, m[1]); err != nil {
						t.Errorf("bad timestamp %q", m[1])
					}
					if len(m[4]) > Defaults.MaxLineBytes {
						t.Errorf("%s: content of %d bytes not split", c.ID, len(m[4]))
					}
					if m[3] == "P" {
						partial = true
						if len(m[4]) != Defaults.MaxLineBytes {
							t.Errorf("%s: partial piece of %d bytes", c.ID, len(m[4]))
						}
					}
				}
				for _, tm := range tokenRE.FindAllStringSubmatch(line, -1) {
					if tm[1] != c.ID {
						t.Errorf("%s: token of %s in its file", c.ID, tm[1])
					}
					seq, _ := strconv.ParseInt(tm[2], 10, 64)
					seen[c.ID] = append(seen[c.ID], seq)
				}
			}
		}
		if c.Long > 0 && !partial {
			t.Errorf("%s: %d long lines but no partial piece", c.ID, c.Long)
		}
		// File order is first-byte order: the tokens must be exactly 1..Lines.
		got := seen[c.ID]
		if int64(len(got)) != c.Lines {
			t.Errorf("%s: %d tokens in its files, ledger says %d", c.ID, len(got), c.Lines)
			continue
		}
		for i, seq := range got {
			if seq != int64(i+1) {
				t.Errorf("%s: token %d at position %d", c.ID, seq, i+1)
				break
			}
		}
	}
	for _, f := range []Format{FormatKlogText, FormatKlogJSON, FormatPlain} {
		if !formats[f] {
			t.Errorf("no container logged %s", f)
		}
	}
}

// TestRotationKeepsFiles checks kubelet's retention: at most KeepFiles files per container, all
// rotated ones but the newest compressed.
func TestRotationKeepsFiles(t *testing.T) {
	root := t.TempDir()
	sim, err := New(Config{
		Root: root, Seed: 3, Pods: 1,
		Phases:      []Phase{{Duration: 3500 * time.Millisecond, LinesPerSecond: 3000}},
		RotateBytes: 16 << 10, RotateCheck: 50 * time.Millisecond, KeepFiles: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := sim.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ledger.Removed == 0 {
		t.Fatalf("no rotated file removed: %+v", ledger)
	}
	files, _ := filepath.Glob(filepath.Join(sim.PodsDir(), "*", "*", "*"))
	if len(files) > 3 {
		t.Errorf("%d files kept, want at most 3: %v", len(files), files)
	}
	var plain int
	for _, f := range files {
		if rotatedRE.MatchString(filepath.Base(f)) && !strings.HasSuffix(f, ".gz") {
			plain++
		}
	}
	if plain > 1 {
		t.Errorf("%d uncompressed rotated files, want at most 1: %v", plain, files)
	}
}

func TestConfigValidate(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no root":      {},
		"keep 1":       {Root: "x", KeepFiles: 1},
		"bad mix":      {Root: "x", Mix: Mix{Plain: 1, Long: 0.8, Malformed: 0.5}},
		"bad phase":    {Root: "x", Phases: []Phase{{Duration: 0, LinesPerSecond: 1}}},
		"tiny max len": {Root: "x", MaxLineBytes: 10},
	} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := (Config{Root: "x"}).Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestRuntimeWritesToTheRenamedFileUntilReopen: after kubelet renames the file, the runtime goes
// on writing to it (through its open descriptor) until it reopens, ReopenDelay later; only then
// does the new file exist.
func TestRuntimeWritesToTheRenamedFileUntilReopen(t *testing.T) {
	root := t.TempDir()
	sim, err := New(Config{Root: root, Seed: 4, Pods: 1, RotateBytes: 1, ReopenDelay: time.Hour, ReopenOverlap: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.startPod(false)
	if err != nil {
		t.Fatal(err)
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if err := sim.writeLine(c); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := sim.rotate(c, now); err != nil {
		t.Fatal(err)
	}
	rotated := c.path + "." + now.UTC().Format("20060102-150405")
	before, err := os.Stat(rotated)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.writeLine(c); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(rotated)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() <= before.Size() {
		t.Fatal("the line written before the reopen is not in the renamed file")
	}
	if _, err := os.Stat(c.path); !os.IsNotExist(err) {
		t.Fatalf("the new file exists before the runtime reopened: %v", err)
	}
	c.reopenAt = now // the reopen is due
	// The first write creates the new file; with the overlap over (a nanosecond), the next
	// one goes to it.
	for range 2 {
		if err := sim.writeLine(c); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := os.Stat(c.path); err != nil || st.Size() == 0 {
		t.Fatalf("after the reopen the line is not in the new file: %v", err)
	}
}

// TestRenamedFileTakesLinesAfterTheNewFileExists: with ReopenOverlap, the runtime's reopen
// creates the new file first and the renamed file still takes lines until the overlap ends, as
// containerd's old writer drains into it; then lines go to the new file only.
func TestRenamedFileTakesLinesAfterTheNewFileExists(t *testing.T) {
	root := t.TempDir()
	sim, err := New(Config{Root: root, Seed: 4, Pods: 1, RotateBytes: 1, ReopenDelay: time.Hour, ReopenOverlap: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.startPod(false)
	if err != nil {
		t.Fatal(err)
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if err := sim.writeLine(c); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := sim.rotate(c, now); err != nil {
		t.Fatal(err)
	}
	rotated := c.path + "." + now.UTC().Format("20060102-150405")
	c.reopenAt = now // the reopen is due: the new file is created, the overlap begins
	if err := sim.writeLine(c); err != nil {
		t.Fatal(err)
	}
	newFile, err := os.Stat(c.path)
	if err != nil {
		t.Fatalf("the reopen did not create the new file: %v", err)
	}
	if newFile.Size() != 0 {
		t.Fatal("a line written during the overlap went to the new file")
	}
	during, err := os.Stat(rotated)
	if err != nil {
		t.Fatal(err)
	}
	c.swapAt = now // the overlap is over
	if err := sim.writeLine(c); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(rotated)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() != during.Size() {
		t.Fatal("the renamed file took a line after the overlap")
	}
	if st, err := os.Stat(c.path); err != nil || st.Size() == 0 {
		t.Fatalf("after the overlap the line is not in the new file: %v", err)
	}
}

// TestNamedPods: named pods start first (then the default generated ones); a named pod's
// lines go to its own directory, and every pod reference in them
// names the pod itself.
func TestNamedPods(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	id := PodIdentity{Namespace: "shop", Name: "cart-0", UID: "6f1c2d3e-4a5b-4c6d-8e7f-001122334455", Format: FormatKlogJSON}
	sim, err := New(Config{
		Root: root, Seed: 3, Named: []PodIdentity{id, {Namespace: "shop", Name: "cart-1", UID: "6f1c2d3e-4a5b-4c6d-8e7f-001122334466"}},
		Phases: []Phase{{Duration: 300 * time.Millisecond, LinesPerSecond: 400}}, Mix: Mix{KlogText: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := sim.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ledger.Containers) != 2+Defaults.Pods || ledger.Containers[0].Pod != "cart-0" || ledger.Containers[0].UID != id.UID || ledger.Containers[0].Format != FormatKlogJSON ||
		ledger.Containers[1].Format != FormatKlogText {
		t.Fatalf("containers: %+v", ledger.Containers)
	}
	lines := readAll(t, filepath.Join(sim.PodsDir(), "shop_cart-0_"+id.UID, "app", "0.log"))
	named := 0
	for _, l := range lines {
		if strings.Contains(l, `"pod":`) {
			if !strings.Contains(l, `"pod":{"name":"cart-0","namespace":"shop"}`) {
				t.Errorf("a line names another pod: %s", l)
			}
			named++
		}
		if strings.Contains(l, `"podUID":`) && !strings.Contains(l, `"podUID":"`+id.UID+`"`) {
			t.Errorf("a line gives another uid: %s", l)
		}
	}
	if int64(len(lines)) != ledger.Containers[0].Lines || named == 0 {
		t.Errorf("%d lines (ledger %d), %d naming the pod", len(lines), ledger.Containers[0].Lines, named)
	}
}
