// SPDX-License-Identifier: Apache-2.0

//go:build !unix

package seglog

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir opens dir's LOCK file; without flock, two clients on one directory are not detected.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("queue_storage: opening the lock of %s: %w", dir, err)
	}
	return f, nil
}

func unlockDir(f *os.File) error { return f.Close() }
