//go:build !unix

package store

// openNoBlock is 0 where there are no FIFOs to block on.
const openNoBlock = 0
