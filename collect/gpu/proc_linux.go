package gpu

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when this process ends, however it ends.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
