// SPDX-License-Identifier: Apache-2.0

package kubenode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// JournalOptions (opt-in) sends a program's output to a systemd journal file as journald
// would store a service's stdout, so that the journal receiver reads the node's real kubelet
// lines (issue 37): each line becomes an entry of Unit (_SYSTEMD_UNIT, SYSLOG_IDENTIFIER,
// _PID, _TRANSPORT=stdout, PRIORITY=6, _HOSTNAME, the machine's boot id), written by systemd's
// own writer, systemd-journal-remote, reading the journal export format on its stdin.
//
// Wiring it (node.go, the lead's): a Config field `Journal *JournalOptions`, and for the
// kubelet `w, err := NewJournalWriter(*n.cfg.Journal, "kubelet.service", cmd.Process.Pid)` after
// cmd.Start, its output through a pipe copied to both the log file and w, and w.Close() once
// the kubelet stopped.
type JournalOptions struct {
	// RemoteBin is systemd-journal-remote (`make journal-tools`: /lib/systemd/...).
	RemoteBin string
	// File is the journal file written, e.g. <dir>/journal/<machine-id>/system.journal: the
	// folder above it is what the journal receiver's directories list.
	File string
	// Hostname is the entries' _HOSTNAME; empty: the machine's.
	Hostname string
}

// JournalWriter is an io.Writer: every complete line written becomes one journal entry.
type JournalWriter struct {
	mu      sync.Mutex
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	partial []byte
	fixed   string // the fields every entry has
	boot    string
	start   time.Time
	entries int
	done    chan error
}

// NewJournalWriter starts systemd-journal-remote writing opts.File (created with its folder
// when missing, appended to otherwise) for entries of unit, written by process pid.
func NewJournalWriter(opts JournalOptions, unit string, pid int) (*JournalWriter, error) {
	if opts.RemoteBin == "" || opts.File == "" || !strings.HasSuffix(opts.File, ".journal") {
		return nil, errors.New("kubenode: JournalOptions needs RemoteBin and a File ending in .journal")
	}
	if err := os.MkdirAll(filepath.Dir(opts.File), 0o755); err != nil {
		return nil, err
	}
	host := opts.Hostname
	if host == "" {
		host, _ = os.Hostname()
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return nil, err
	}
	ident := strings.TrimSuffix(unit, ".service")
	w := &JournalWriter{
		boot:  strings.ReplaceAll(strings.TrimSpace(string(boot)), "-", ""),
		start: time.Now(),
		fixed: fmt.Sprintf("_SYSTEMD_UNIT=%s\nSYSLOG_IDENTIFIER=%s\n_PID=%d\n_TRANSPORT=stdout\nPRIORITY=6\n_HOSTNAME=%s\n", unit, ident, pid, host),
		done:  make(chan error, 1),
	}
	w.cmd = exec.Command(opts.RemoteBin, "--output="+opts.File, "-") //nolint:gosec // systemd's own writer on the test node's own file
	if w.stdin, err = w.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	w.cmd.Stderr = &stderr
	if err := w.cmd.Start(); err != nil {
		return nil, fmt.Errorf("kubenode: start systemd-journal-remote: %w", err)
	}
	go func() {
		err := w.cmd.Wait()
		if err != nil {
			err = fmt.Errorf("systemd-journal-remote: %w: %s", err, stderr.String())
		}
		w.done <- err
	}()
	return w, nil
}

// Write turns every complete line of p (and of what came before it) into an entry; a line
// without its newline waits for the rest.
func (w *JournalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	var b bytes.Buffer
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.entry(&b, w.partial[:i])
		w.partial = w.partial[i+1:]
	}
	if b.Len() > 0 {
		if _, err := w.stdin.Write(b.Bytes()); err != nil {
			return 0, fmt.Errorf("kubenode: journal: %w", err)
		}
	}
	return len(p), nil
}

// entry encodes one line in the export format: a line with a control character is written as
// a binary field (its length, then the bytes), as the format requires.
func (w *JournalWriter) entry(b *bytes.Buffer, line []byte) {
	now := time.Now()
	fmt.Fprintf(b, "__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=%d\n_BOOT_ID=%s\n%s", now.UnixMicro(), 1_000_000+now.Sub(w.start).Microseconds(), w.boot, w.fixed)
	if bytes.ContainsFunc(line, func(r rune) bool { return r < 0x20 && r != '\t' }) {
		b.WriteString("MESSAGE\n")
		n := uint64(len(line))
		for range 8 {
			b.WriteByte(byte(n))
			n >>= 8
		}
		b.Write(line)
		b.WriteString("\n\n")
	} else {
		b.WriteString("MESSAGE=")
		b.Write(line)
		b.WriteString("\n\n")
	}
	w.entries++
}

// Entries is how many entries were written.
func (w *JournalWriter) Entries() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.entries
}

// Close writes a last line without its newline, ends the input and waits for
// systemd-journal-remote to finish the file.
func (w *JournalWriter) Close() error {
	w.mu.Lock()
	if len(w.partial) > 0 {
		var b bytes.Buffer
		w.entry(&b, w.partial)
		w.partial = nil
		_, _ = w.stdin.Write(b.Bytes())
	}
	w.mu.Unlock()
	_ = w.stdin.Close()
	return <-w.done
}

// journalRemoteBin returns systemd-journal-remote's path, or "" when it is not installed.
func journalRemoteBin() string {
	for _, p := range []string{"/usr/lib/systemd/systemd-journal-remote", "/lib/systemd/systemd-journal-remote"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// JournalRemoteBin returns systemd-journal-remote's path (`make journal-tools`), or "" when it
// is not installed.
func JournalRemoteBin() string { return journalRemoteBin() }

// pendingWriter holds what is written until its destination is set (a program's first lines,
// written before the writer that needs its pid exists), then writes through.
type pendingWriter struct {
	mu   sync.Mutex
	to   io.Writer
	held []byte
}

// maxHeld bounds what a pendingWriter holds before its destination is set.
const maxHeld = 1 << 20

func (p *pendingWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.to == nil {
		if len(p.held)+len(b) <= maxHeld {
			p.held = append(p.held, b...)
		}
		return len(b), nil
	}
	if _, err := p.to.Write(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (p *pendingWriter) set(w io.Writer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.to = w
	if len(p.held) > 0 {
		_, _ = w.Write(p.held)
		p.held = nil
	}
}
