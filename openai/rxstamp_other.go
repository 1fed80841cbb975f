//go:build !linux

package openai

import (
	"io"
	"net"
)

// rxReader is unavailable here: every connection keeps the user clock.
type rxReader struct{}

func enableRx(net.Conn) *rxReader { return nil }

func (r *rxReader) read(p []byte) (int, int64, error) { panic("unreachable") }

func (r *rxReader) each(func([]byte, int64) bool, func() bool) error { panic("unreachable") }

const rxSupported = false

func stampsOn() io.Closer { return nil }

func peerClosed(net.Conn) bool { return false }

func (r *rxReader) watch(func([]byte, int64) bool, <-chan struct{}) (error, bool) { return nil, false }

func (c *conn) leavePoller() {}

// ReactorRescues is 0: there is no reactor here.
func ReactorRescues() int64 { return 0 }
