// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package mototest

import "os/exec"

// dieWithParent is a no-op where the platform cannot tie a child's life to its parent; Stop
// ends the server.
func dieWithParent(*exec.Cmd) {}
