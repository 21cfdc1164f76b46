package cloudwatchgroups

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the child get SIGKILL when the test binary dies before its cleanup runs.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
