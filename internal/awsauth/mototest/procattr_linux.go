// SPDX-License-Identifier: Apache-2.0

package mototest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the server die with the test binary, even when it is killed.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
