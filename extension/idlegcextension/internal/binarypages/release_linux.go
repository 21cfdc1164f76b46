// SPDX-License-Identifier: Apache-2.0

//go:build linux

package binarypages

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Release asks the kernel to page out the executable's read-only mappings (MADV_PAGEOUT) and
// returns how many bytes of the process's file-backed resident memory went (RssFile before
// minus after; zero when the program touched as much again meanwhile). It returns
// ErrUnsupported where the kernel has no MADV_PAGEOUT, or will not page out this executable for
// this process.
func Release() (int64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	spans := ReadOnlySpans(maps, exe)
	if len(spans) == 0 {
		return 0, fmt.Errorf("no read-only mapping of %s in /proc/self/maps", exe)
	}
	before, _ := selfRSSFile()
	for _, s := range spans {
		// Addresses from the kernel's own list, passed back as numbers: no Go pointer involved.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, s.Start, s.End-s.Start, unix.MADV_PAGEOUT); errno != 0 {
			if errors.Is(errno, unix.EINVAL) {
				return 0, fmt.Errorf("%w: madvise: %w", ErrUnsupported, errno)
			}
			return 0, fmt.Errorf("madvise %#x-%#x: %w", s.Start, s.End, errno)
		}
	}
	after, _ := selfRSSFile()
	released := max(before-after, 0)
	if released == 0 {
		// The kernel pages out a file's pages only for a process that owns the file or may
		// open it for writing, and answers success either way.
		if err := mayPageOut(exe); err != nil {
			return 0, fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
	}
	return released, nil
}

// mayPageOut returns why the kernel would leave exe's pages alone: the process neither owns it
// nor may write it (a binary owned by another user, or on a read-only filesystem).
func mayPageOut(exe string) error {
	var st unix.Stat_t
	if err := unix.Stat(exe, &st); err != nil {
		return err
	}
	if int(st.Uid) == unix.Geteuid() {
		return nil
	}
	if err := unix.Access(exe, unix.W_OK); err != nil {
		return fmt.Errorf("the kernel pages out only an executable the process owns or may write: %s is owned by uid %d, the process runs as uid %d (%w)",
			exe, st.Uid, unix.Geteuid(), err)
	}
	return nil
}

func selfRSSFile() (int64, bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	return rssFile(status)
}
