// SPDX-License-Identifier: Apache-2.0

package tracker

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestDeviceRenumberedAfterReboot: after a reboot the filesystem can get another device number
// (device-mapper and loop devices are numbered in the order they appear). The inode and the
// content are the same, so the checkpoint resumes by path and fingerprint: the file is not read
// again from the start.
func TestDeviceRenumberedAfterReboot(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	st := checkpointAfter(t, root, p, lines(1, 2))
	writeFile(t, p, lines(3, 4), true)
	st.ID.Dev++ // the device number the file had before the reboot

	tr := testTracker(t, root, []State{st}, false, false)
	gone, errs := tr.Discover(0)
	if len(errs) != 0 || len(gone) != 0 {
		t.Fatalf("errs %v gone %v", errs, gone)
	}
	if got := readAll(t, tr, false); fmt.Sprint(got) != wantLines(3, 4) {
		t.Fatalf("got %v, want %v", got, wantLines(3, 4))
	}
}

// TestDeviceRenumberedAcrossARotation: the same after a reboot during which kubelet rotated the
// checkpointed file: the rotated sibling is found by inode and fingerprint despite the new device
// number and resumed at the checkpoint.
func TestDeviceRenumberedAcrossARotation(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	st := checkpointAfter(t, root, p, lines(1, 2))
	writeFile(t, p, lines(3, 4), true)
	require(t, os.Rename(p, p+".20240501-100000"))
	writeFile(t, p, lines(5, 6), false)
	st.ID.Dev++

	tr := testTracker(t, root, []State{st}, false, false)
	if _, errs := tr.Discover(0); len(errs) != 0 {
		t.Fatal(errs)
	}
	if got := readAll(t, tr, true); fmt.Sprint(got) != wantLines(3, 6) {
		t.Fatalf("got %v, want %v", got, wantLines(3, 6))
	}
}

// TestOtherContentOnARenumberedDeviceIsNew: the fallback needs the same fingerprint: another file
// at the path (same inode number by chance) is read from its start.
func TestOtherContentOnARenumberedDeviceIsNew(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ns_p_u", "c", "0.log")
	st := checkpointAfter(t, root, p, lines(1, 2))
	st.ID.Dev++
	st.FP.Hash ^= 1
	tr := testTracker(t, root, []State{st}, false, false)
	tr.Discover(0)
	if got := readAll(t, tr, false); fmt.Sprint(got) != wantLines(1, 2) {
		t.Fatalf("got %v", got)
	}
}
