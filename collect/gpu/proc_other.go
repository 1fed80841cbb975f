//go:build !linux

package gpu

import "os/exec"

// dieWithParent does nothing here: Close stops the process.
func dieWithParent(*exec.Cmd) {}
