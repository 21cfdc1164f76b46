// SPDX-License-Identifier: Apache-2.0

//go:build unix

package seglog

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockDir holds an exclusive flock on dir's LOCK file: a second client on the same directory,
// in this process or another, gets an error (design.md, rule 1).
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600) //nolint:gosec // G703: the client's directory, from the configuration and escaped names
	if err != nil {
		return nil, fmt.Errorf("queue_storage: opening the lock of %s: %w", dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil { //nolint:gosec // a file descriptor fits an int
		_ = f.Close()
		return nil, fmt.Errorf("queue_storage: %s is in use by another client: %w", dir, err)
	}
	return f, nil
}

func unlockDir(f *os.File) error { return f.Close() }
