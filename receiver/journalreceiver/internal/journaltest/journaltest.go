// SPDX-License-Identifier: Apache-2.0

// Package journaltest writes real journal files with systemd's own writer
// (systemd-journal-remote, from the journal export format) and reads them back with systemd's
// own reader (journalctl), for the receiver's differential tests. Without the programs a test
// skips, and fails under CI=true (the Makefile's journal-tools target installs them).
package journaltest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// Field is one FIELD=value pair; Value may be binary.
type Field struct {
	Name  string
	Value []byte
}

// Entry is one entry in the export format.
type Entry struct {
	Realtime  uint64 // __REALTIME_TIMESTAMP, microseconds
	Monotonic uint64 // __MONOTONIC_TIMESTAMP, microseconds
	BootID    string // 32 hex digits
	Fields    []Field
}

// F is a shorthand for a text field.
func F(name, value string) Field { return Field{Name: name, Value: []byte(value)} }

var remoteCandidates = []string{"/usr/lib/systemd/systemd-journal-remote", "/lib/systemd/systemd-journal-remote"}

func need(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not installed (run make journal-tools)", what)
	}
	t.Skipf("%s not installed (run make journal-tools)", what)
}

// HaveRemote reports whether systemd-journal-remote is installed.
func HaveRemote() bool {
	if os.Getenv("OTELCOL_K8S_JOURNAL_REMOTE") != "" {
		return true
	}
	for _, p := range remoteCandidates {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// RemoteBin returns systemd-journal-remote's path ($OTELCOL_K8S_JOURNAL_REMOTE overrides).
func RemoteBin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("OTELCOL_K8S_JOURNAL_REMOTE"); p != "" {
		return p
	}
	for _, p := range remoteCandidates {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	need(t, "systemd-journal-remote")
	return ""
}

// JournalctlBin returns journalctl's path.
func JournalctlBin(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("journalctl")
	if err != nil {
		need(t, "journalctl")
	}
	return p
}

// Export encodes entries in the journal export format.
func Export(entries []Entry) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&b, "__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=%d\n_BOOT_ID=%s\n", e.Realtime, e.Monotonic, e.BootID)
		for _, f := range e.Fields {
			if bytes.IndexByte(f.Value, '\n') < 0 && isText(f.Value) {
				fmt.Fprintf(&b, "%s=%s\n", f.Name, f.Value)
				continue
			}
			b.WriteString(f.Name)
			b.WriteByte('\n')
			_ = binary.Write(&b, binary.LittleEndian, uint64(len(f.Value)))
			b.Write(f.Value)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func isText(v []byte) bool {
	for _, c := range v {
		if c < 0x20 && c != '\t' {
			return false
		}
	}
	return true
}

// Write appends entries to the journal file at path (created when missing) with
// systemd-journal-remote; env adds variables such as SYSTEMD_JOURNAL_COMPACT=0. Extra
// arguments go to the program (--compress=no).
func Write(t testing.TB, path string, entries []Entry, env []string, args ...string) {
	t.Helper()
	bin := RemoteBin(t)
	cmd := exec.Command(bin, append([]string{"--output=" + path}, append(args, "-")...)...) //nolint:gosec // the test runs systemd's own tool on its own file
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = bytes.NewReader(Export(entries))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("systemd-journal-remote: %v: %s", err, out)
	}
}

// JSONEntry is one entry as journalctl -o json prints it: each field's values (several when
// the field repeats), text or binary.
type JSONEntry map[string][][]byte

// Read returns journalctl's reading of the file (--all: large fields too).
func Read(t testing.TB, path string) []JSONEntry {
	t.Helper()
	cmd := exec.Command(JournalctlBin(t), "--file="+path, "-o", "json", "--all", "--no-pager") //nolint:gosec // the test runs systemd's own tool on its own file
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("journalctl: %v: %s", err, stderr.Bytes())
	}
	var res []JSONEntry
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("journalctl line: %v", err)
		}
		e := JSONEntry{}
		for k, v := range raw {
			vals, err := decodeValue(v)
			if err != nil {
				t.Fatalf("journalctl field %s: %v", k, err)
			}
			e[k] = vals
		}
		res = append(res, e)
	}
	return res
}

// decodeValue turns journalctl's JSON value into values: a string, an array of byte numbers
// (a binary value), or an array of those (a repeated field).
func decodeValue(v json.RawMessage) ([][]byte, error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return [][]byte{[]byte(s)}, nil
	}
	var nums []int
	if json.Unmarshal(v, &nums) == nil {
		return [][]byte{bytesOf(nums)}, nil
	}
	var multi []json.RawMessage
	if err := json.Unmarshal(v, &multi); err != nil {
		return nil, err
	}
	var res [][]byte
	for _, m := range multi {
		one, err := decodeValue(m)
		if err != nil {
			return nil, err
		}
		if len(one) != 1 {
			return nil, errors.New("nested array")
		}
		res = append(res, one[0])
	}
	return res, nil
}

func bytesOf(nums []int) []byte {
	b := make([]byte, len(nums))
	for i, n := range nums {
		b[i] = byte(n) //nolint:gosec // the caller passes a byte-sized value
	}
	return b
}

// Uint returns a decimal field of a journalctl entry (__REALTIME_TIMESTAMP...).
func (e JSONEntry) Uint(name string) uint64 {
	v := e[name]
	if len(v) != 1 {
		return 0
	}
	n, _ := strconv.ParseUint(string(v[0]), 10, 64)
	return n
}

// String returns a field's only value as text.
func (e JSONEntry) String(name string) string {
	v := e[name]
	if len(v) != 1 {
		return ""
	}
	return string(v[0])
}
