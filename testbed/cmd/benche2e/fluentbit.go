// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// fluentBitName is the pipeline name of Fluent Bit's runs (-fluentbit-bin): its tail input
// with the cri parser into its cloudwatch_logs output, over plain HTTP to the local server.
const fluentBitName = "fluent-bit"

// fluentBitOptions are Fluent Bit's Kubernetes-typical settings, off by default.
type fluentBitOptions struct {
	// memBufLimit is the tail input's Mem_Buf_Limit ("" for none), e.g. "50MB".
	memBufLimit string
	// filesystem buffers chunks on disk (storage.type filesystem) in the run's state directory.
	filesystem bool
}

var fluentBitOpts fluentBitOptions

// checkFluentBit runs the Fluent Bit binary with --version before any corpus is written, so
// that a binary the machine cannot run (a shared library missing: the loader's exit status
// 127) is reported with what it printed, not as a failed round.
func checkFluentBit(bin string) error {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %w: %s(its README lists the Debian packages of the shared libraries it needs)",
			bin, err, out)
	}
	if fluentBitOpts.filesystem {
		// storage.type filesystem needs the storage_backlog input, which minimal builds (the
		// one in ../shared/bench/fluent-bit) leave out: Fluent Bit would exit at start.
		help, _ := exec.Command(bin, "-h").CombinedOutput()
		if !bytes.Contains(help, []byte("storage_backlog")) {
			return fmt.Errorf("-fluentbit-filesystem: %s has no storage_backlog input plugin (a minimal build); "+
				"filesystem buffering needs a build with it", bin)
		}
	}
	return nil
}

// fluentBitRun writes Fluent Bit's configuration for one run: every log file of the corpus read
// from its beginning, CRI lines joined by the built-in cri multiline parser, one stream per
// file (Tag kube.*, as Kubernetes deployments set it) in one group, sent to the local CloudWatch Logs server at endpoint.
func fluentBitRun(dir, corpus, state, endpoint, tag string) (config string, env []string, err error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[SERVICE]\n    Flush        1\n    Log_Level    warn\n")
	if fluentBitOpts.filesystem {
		// Fluent Bit refuses a relative storage.path ("cannot init storage backlog").
		chunks, err := filepath.Abs(filepath.Join(state, "flb-storage"))
		if err != nil {
			return "", nil, err
		}
		if err := os.MkdirAll(chunks, 0o755); err != nil {
			return "", nil, err
		}
		fmt.Fprintf(&b, "    storage.path %s\n", chunks)
	}
	fmt.Fprintf(&b, "[INPUT]\n    Name              tail\n    Tag               kube.*\n    Path              %s\n", filepath.Join(corpus, "var/log/pods/*/*/*.log"))
	fmt.Fprintf(&b, "    multiline.parser  cri\n    Read_from_Head    true\n    DB                %s\n", filepath.Join(state, "tail.db"))
	if fluentBitOpts.memBufLimit != "" {
		fmt.Fprintf(&b, "    Mem_Buf_Limit     %s\n", fluentBitOpts.memBufLimit)
	}
	if fluentBitOpts.filesystem {
		fmt.Fprintf(&b, "    storage.type      filesystem\n")
	}
	fmt.Fprintf(&b, "[OUTPUT]\n    Name               cloudwatch_logs\n    Match              *\n    region             us-east-1\n")
	fmt.Fprintf(&b, "    log_group_name     bench\n    log_stream_prefix  node-\n    auto_create_group  On\n")
	fmt.Fprintf(&b, "    endpoint           %s\n    port               %s\n    tls                Off\n", u.Hostname(), u.Port())
	config = filepath.Join(dir, "fluent-bit-"+tag+".conf")
	if err := os.WriteFile(config, []byte(b.String()), 0o600); err != nil {
		return "", nil, err
	}
	return config, []string{"AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench", "AWS_EC2_METADATA_DISABLED=true"}, nil
}

// writeCRICorpus writes records CRI entries into files container log files under
// root/var/log/pods, as a node's kubelet lays them out: every 10th entry is split into a
// partial (P) and a final (F) line, a third of the entries are on stderr. Timestamps end now,
// one microsecond apart (CloudWatch accepts events of the last 14 days only). It returns the
// physical lines and the bytes written.
func writeCRICorpus(root string, records, files int) (lines, bytes int64, err error) {
	words := []string{"GET", "POST", "/api/v1/orders", "/healthz", "cache", "miss", "hit", "user", "session", "retry", "upstream", "timeout"}
	clock := time.Now().Add(-time.Duration(records) * time.Microsecond)
	entry := 0
	for f := range files {
		d := filepath.Join(root, "var/log/pods", fmt.Sprintf("ns%d_pod-%d_%08x-0000-4000-8000-000000000000", f%20, f, f), "app")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, 0, err
		}
		out, err := os.Create(filepath.Join(d, "0.log"))
		if err != nil {
			return 0, 0, err
		}
		w := bufio.NewWriterSize(out, 1<<20)
		n := records / files
		if f < records%files {
			n++
		}
		for range n {
			msg := fmt.Sprintf("level=info msg=%q method=%s path=%s status=%d bytes=%d duration_ms=%d request_id=%08x",
				words[entry%len(words)]+" "+words[(entry/7)%len(words)]+" "+words[(entry/13)%len(words)],
				words[entry%2], words[2+entry%2], 200+entry%5, entry%9973, entry%311, entry)
			stream := "stdout"
			if entry%3 == 2 {
				stream = "stderr"
			}
			pieces := []string{msg}
			if entry%10 == 9 {
				pieces = []string{msg[:len(msg)/2], msg[len(msg)/2:]}
			}
			for i, p := range pieces {
				clock = clock.Add(time.Microsecond)
				flag := "F"
				if i < len(pieces)-1 {
					flag = "P"
				}
				k, _ := fmt.Fprintf(w, "%s %s %s %s\n", clock.UTC().Format(time.RFC3339Nano), stream, flag, p)
				bytes += int64(k)
				lines++
			}
			entry++
		}
		if err := w.Flush(); err != nil {
			return 0, 0, err
		}
		if err := out.Close(); err != nil {
			return 0, 0, err
		}
	}
	return lines, bytes, nil
}
