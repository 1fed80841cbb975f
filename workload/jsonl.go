package workload

import (
	"bufio"
	"bytes"
	"fmt"
)

// jsonLines calls fn with each non-blank line of b, trimmed, and its 1-based number (lines of
// up to 64 MiB), stopping at fn's first error. The dataset and trace readers share it.
func jsonLines(b []byte, fn func(line int, text []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		t := bytes.TrimSpace(sc.Bytes())
		if len(t) == 0 {
			continue
		}
		if err := fn(line, t); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading line %d: %w", line+1, err)
	}
	return nil
}
