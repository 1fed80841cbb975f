//go:build unix

package store

import "syscall"

// openNoBlock makes opening a FIFO return at once instead of waiting for a writer.
const openNoBlock = syscall.O_NONBLOCK
