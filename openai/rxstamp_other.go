//go:build !linux

package openai

import "net"

// rxReader is unavailable here: every connection keeps the user clock.
type rxReader struct{}

func enableRx(net.Conn) *rxReader { return nil }

func (r *rxReader) read(p []byte) (int, int64, error) { panic("unreachable") }

const rxSupported = false
