//go:build !unix

package host

import "errors"

func openFileLimit() (soft, hard uint64, ok bool) { return 0, 0, false }

func setOpenFileLimit(uint64) error { return errors.New("no open-file limit here") }
