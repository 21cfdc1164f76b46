// SPDX-License-Identifier: Apache-2.0

// Package binarypages releases the resident pages of the running program's own executable: its
// code and read-only data, mapped from the file. Much of what a Go program touches once, at
// start-up (package initialisation, such as registering a client library's types), stays
// resident for the life of the process; released, only the pages the program goes on using
// come back, on first touch, from the page cache or the file.
package binarypages

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// ErrUnsupported is returned where the kernel cannot release pages on request (not Linux, or a
// kernel older than 5.4, which has no MADV_PAGEOUT).
var ErrUnsupported = errors.New("releasing the executable's pages is not supported here")

// Span is one mapping of the executable: [Start, End).
type Span struct {
	Start, End uintptr
}

// ReadOnlySpans returns the mappings of exe in maps (the text of /proc/<pid>/maps) that the
// process cannot write: the code and the read-only data. The writable data mapping is left out
// (its pages may differ from the file's).
func ReadOnlySpans(maps []byte, exe string) []Span {
	var spans []Span
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// start-end perms offset dev inode path (the path may hold spaces)
		f := strings.Fields(sc.Text())
		if len(f) < 6 || strings.Join(f[5:], " ") != exe || len(f[1]) < 2 || f[1][1] != '-' {
			continue
		}
		from, to, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		spans = append(spans, Span{Start: uintptr(start), End: uintptr(end)})
	}
	return spans
}

// rssFile returns the RssFile line of status (the text of /proc/<pid>/status) in bytes.
func rssFile(status []byte) (int64, bool) {
	for line := range strings.SplitSeq(string(status), "\n") {
		rest, ok := strings.CutPrefix(line, "RssFile:")
		if !ok {
			continue
		}
		kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return kib * 1024, err == nil
	}
	return 0, false
}
