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
// minus after; zero when the program touched as much again meanwhile).
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
	return max(before-after, 0), nil
}

func selfRSSFile() (int64, bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	return rssFile(status)
}
