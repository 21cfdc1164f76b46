// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, 100 on every Linux platform Go supports.
const clockTicks = 100

// ProcUsage reads a Linux process's CPU time (user + system) and peak resident set size from /proc.
func ProcUsage(pid int) (cpu time.Duration, peakRSS int64, err error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) may hold spaces; fields after its ')' are fixed.
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, _ := strconv.ParseInt(fields[12], 10, 64) // field 15
	cpu = time.Duration(utime+stime) * time.Second / clockTicks
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return cpu, 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			peakRSS = kb << 10
		}
	}
	return cpu, peakRSS, nil
}

// Memory is a process's resident memory split by kind, from /proc/<pid>/status, in bytes:
// Anon is what the Go heap, stacks and buffers use (RssAnon), File the pages of mapped files
// (RssFile: the binary's text and data, the queue database's mmap), Shmem shared memory.
type Memory struct {
	Anon, File, Shmem int64
}

// Total is the resident set size the three parts make.
func (m Memory) Total() int64 { return m.Anon + m.File + m.Shmem }

// Max keeps the larger of each part.
func (m Memory) Max(o Memory) Memory {
	return Memory{Anon: max(m.Anon, o.Anon), File: max(m.File, o.File), Shmem: max(m.Shmem, o.Shmem)}
}

// ProcMemory reads a Linux process's current RssAnon, RssFile and RssShmem.
func ProcMemory(pid int) (Memory, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	for _, line := range strings.Split(string(status), "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch key {
		case "RssAnon":
			dst = &m.Anon
		case "RssFile":
			dst = &m.File
		case "RssShmem":
			dst = &m.Shmem
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("/proc/%d/status: %s: %w", pid, key, err)
		}
		*dst = kb << 10
	}
	return m, nil
}
