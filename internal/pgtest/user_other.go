//go:build !unix

package pgtest

import (
	"errors"
	"os/exec"
	"os/user"
)

func asUser(*exec.Cmd, *user.User) error {
	return errors.New("running the PostgreSQL test server as another user needs a unix system")
}

func chown(string, *user.User) error {
	return errors.New("running the PostgreSQL test server as another user needs a unix system")
}
