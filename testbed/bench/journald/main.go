// SPDX-License-Identifier: Apache-2.0

// Command journaldbench compares the journal receiver (pure Go, reads the files) with contrib's
// journald receiver (runs journalctl) on the same journal files, written by systemd's own
// writer (systemd-journal-remote, `make journal-tools`).
//
//	journaldbench gen -dir D [-entries 400000] [-seed 1]
//	journaldbench run -dir D -receiver journal|journald
//
// "gen" writes D/<machine-id>/system.journal and D/manifest.json (how many entries pass the
// node agent's default filters). "run" starts one receiver in this process with a counting
// consumer, both configured to pass the same entries (the default units and the kernel's
// messages, every boot, from the beginning), waits until each of them arrived, and prints one
// JSON line: entries per CPU-second and peak RSS, both including journalctl for journald. Run
// each receiver in its own process so that peak RSS is its own.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/journaldreceiver"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver"
)

// machineID names the generated journal's directory.
const machineID = "4f1b2c3d4e5f60718293a4b5c6d7e8f9"

// units are the node agent's default units; "other" units are filtered out by both receivers.
var (
	units      = []string{"kubelet.service", "containerd.service", "docker.service", "sandbox-image.service"}
	otherUnits = []string{"sshd.service", "systemd-logind.service", "chronyd.service"}
)

// manifest describes generated files.
type manifest struct {
	Entries int64 `json:"entries"` // written
	Passing int64 `json:"passing"` // of the default units or the kernel
	Bytes   int64 `json:"bytes"`   // of the journal files
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: journaldbench gen|run [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2:])
	case "run":
		err = run(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "journaldbench:", err)
		os.Exit(1)
	}
}

// Messages shaped like a node's kubelet (klog), containerd (logfmt) and kernel lines.
var (
	kubeletLines = []string{
		`I1127 10:11:12.123456    1201 kubelet.go:2412] "SyncLoop ADD" source="api" pods=["kube-system/coredns-5d78c9869d-abcde"]`,
		`E1127 10:11:12.223456    1201 pod_workers.go:1301] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"web\" with CrashLoopBackOff: \"back-off 5m0s restarting failed container=web pod=web-7c9d8f_default(0b1c2d3e-0000-4000-8000-000000000001)\"" pod="default/web-7c9d8f" podUID="0b1c2d3e-0000-4000-8000-000000000001"`,
		`I1127 10:11:13.000001    1201 kubelet_node_status.go:73] "Attempting to register node" node="ip-10-0-1-23.eu-west-1.compute.internal"`,
	}
	containerdLines = []string{
		`time="2026-11-27T10:11:12.123456789Z" level=info msg="StartContainer for \"4b1c2d\" returns successfully"`,
		`time="2026-11-27T10:11:12.223456789Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:web-7c9d8f,Uid:0b1c2d3e,Namespace:default,Attempt:0,} returns sandbox id \"9f8e7d\""`,
	}
	kernelLines = []string{
		`IPv6: ADDRCONF(NETDEV_CHANGE): eni4b1c2d3e: link becomes ready`,
		`Memory cgroup out of memory: Killed process 4242 (java) total-vm:4194304kB, anon-rss:2097152kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:4400kB oom_score_adj:968`,
	}
)

// gen writes the journal with systemd-journal-remote, from the export format, in chunks.
func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	dir := fs.String("dir", "", "output directory")
	entries := fs.Int("entries", 400000, "entries to write")
	seed := fs.Uint64("seed", 1, "random seed")
	remote := fs.String("remote", "/lib/systemd/systemd-journal-remote", "systemd-journal-remote")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("-dir is required")
	}
	path := filepath.Join(*dir, machineID, "system.journal")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(*seed, *seed^0x5bd1e995)) //nolint:gosec // benchmark data from a fixed seed
	start := time.Now().Add(-time.Hour).UnixMicro()
	var m manifest
	const chunk = 50000
	for first := 0; first < *entries; first += chunk {
		var b bytes.Buffer
		for i := first; i < min(first+chunk, *entries); i++ {
			fmt.Fprintf(&b, "__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=%d\n_BOOT_ID=0123456789abcdef0123456789abcdef\n_HOSTNAME=ip-10-0-1-23\n", start+int64(i)*10, 1_000_000+int64(i)*10)
			switch k := rng.IntN(10); {
			case k < 5:
				fmt.Fprintf(&b, "_SYSTEMD_UNIT=kubelet.service\nSYSLOG_IDENTIFIER=kubelet\n_PID=1201\n_TRANSPORT=stdout\nPRIORITY=6\nMESSAGE=%s\n", kubeletLines[rng.IntN(len(kubeletLines))])
				m.Passing++
			case k < 7:
				fmt.Fprintf(&b, "_SYSTEMD_UNIT=%s\nSYSLOG_IDENTIFIER=containerd\n_PID=980\n_TRANSPORT=stdout\nPRIORITY=6\nMESSAGE=%s\n", units[1+rng.IntN(len(units)-1)], containerdLines[rng.IntN(len(containerdLines))])
				m.Passing++
			case k < 8:
				fmt.Fprintf(&b, "_TRANSPORT=kernel\nSYSLOG_IDENTIFIER=kernel\nPRIORITY=4\nMESSAGE=%s\n", kernelLines[rng.IntN(len(kernelLines))])
				m.Passing++
			default:
				u := otherUnits[rng.IntN(len(otherUnits))]
				fmt.Fprintf(&b, "_SYSTEMD_UNIT=%s\nSYSLOG_IDENTIFIER=%s\n_PID=77\n_TRANSPORT=syslog\nPRIORITY=6\nMESSAGE=session opened for user ec2-user %d\n", u, strings.TrimSuffix(u, ".service"), i)
			}
			b.WriteByte('\n')
			m.Entries++
		}
		cmd := exec.Command(*remote, "--output="+path, "-") //nolint:gosec // systemd's own tool on the benchmark's own file
		cmd.Stdin = &b
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("systemd-journal-remote: %w: %s", err, out)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	m.Bytes = st.Size()
	raw, _ := json.Marshal(m)
	return os.WriteFile(filepath.Join(*dir, "manifest.json"), raw, 0o600)
}

// counter counts records and closes done once want arrived.
type counter struct {
	n    atomic.Int64
	want int64
	done chan struct{}
}

func (c *counter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *counter) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	if c.n.Add(int64(ld.LogRecordCount())) >= c.want {
		select {
		case <-c.done:
		default:
			close(c.done)
		}
	}
	return nil
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory made by gen")
	which := fs.String("receiver", "journal", "journal or journald")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(*dir, "manifest.json"))
	if err != nil {
		return err
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	c := &counter{want: m.Passing, done: make(chan struct{})}
	rcv, err := newReceiver(*which, filepath.Join(*dir, machineID), c)
	if err != nil {
		return err
	}
	before := cpuTime()
	start := time.Now()
	if err := rcv.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		return err
	}
	select {
	case <-c.done:
	case <-time.After(*timeout):
		return fmt.Errorf("%s: timed out with %d of %d entries", *which, c.n.Load(), m.Passing)
	}
	wall := time.Since(start)
	childCPU, childPeak := children()
	cpu := cpuTime() - before + childCPU
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	got := c.n.Load()
	_ = rcv.Shutdown(context.Background())
	if got != m.Passing {
		return fmt.Errorf("%s: %d records, want %d", *which, got, m.Passing)
	}
	res := map[string]any{
		"receiver": *which, "entries": m.Entries, "records": got, "bytes": m.Bytes,
		"wall_s": wall.Seconds(), "cpu_s": cpu.Seconds(), "journalctl_cpu_s": childCPU.Seconds(),
		"entries_per_cpu_s":       float64(m.Entries) / cpu.Seconds(),
		"peak_rss_mib":            float64(ru.Maxrss)/1024 + float64(childPeak)/1024,
		"journalctl_peak_rss_mib": float64(childPeak) / 1024,
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return nil
}

// newReceiver creates the named receiver reading dir from the beginning, passing the default
// units and the kernel's messages. journald gets the settings that make it read them
// correctly (explicit matches, the kernel's included; every boot), since its documented
// directory + units alone miss the kernel.
func newReceiver(which, dir string, next consumer.Logs) (receiver.Logs, error) {
	var (
		factory receiver.Factory
		conf    map[string]any
	)
	switch which {
	case "journal":
		factory = journalreceiver.NewFactory()
		conf = map[string]any{"directories": []string{dir}, "start_at": "beginning"}
	case "journald":
		factory = journaldreceiver.NewFactory()
		var matches []any
		for _, u := range units {
			matches = append(matches, map[string]any{"_SYSTEMD_UNIT": u})
		}
		matches = append(matches, map[string]any{"_TRANSPORT": "kernel"})
		conf = map[string]any{"directory": dir, "start_at": "beginning", "matches": matches, "all": true}
	default:
		return nil, fmt.Errorf("unknown receiver %q", which)
	}
	cfg := factory.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(conf).Unmarshal(cfg); err != nil {
		return nil, err
	}
	return factory.CreateLogs(context.Background(), receivertest.NewNopSettings(factory.Type()), cfg, next)
}

// cpuTime is this process's user + system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// children returns the CPU time and the summed peak RSS (KiB) of this process's running child
// processes (journalctl), from /proc.
func children() (time.Duration, int64) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", os.Getpid()))
	var cpu time.Duration
	var peak int64
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(raw)) {
			pid, err := strconv.Atoi(field)
			if err != nil {
				continue
			}
			if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
				// Fields after the command (which may hold spaces) start after the last ')'.
				f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
				if len(f) > 12 {
					ut, _ := strconv.ParseInt(f[11], 10, 64)
					st, _ := strconv.ParseInt(f[12], 10, 64)
					cpu += time.Duration(ut+st) * 10 * time.Millisecond // clock ticks of 1/100 s
				}
			}
			if f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
				sc := bufio.NewScanner(f)
				for sc.Scan() {
					if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
						kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
						peak += kb
					}
				}
				_ = f.Close()
			}
		}
	}
	return cpu, peak
}
