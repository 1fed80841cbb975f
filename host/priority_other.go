//go:build !linux

package host

import "errors"

func setNice(int) error { return errors.New("not supported on this system") }

func nice() (int, bool) { return 0, false }

// ShortSlices has no short slices to ask for here.
func ShortSlices() {}
