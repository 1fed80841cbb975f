package plan

import (
	"path/filepath"
	"testing"
)

// Every example plan shipped in examples/ loads and resolves without a problem.
func TestExamplePlansResolve(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("want the example plans, found %v (%v)", files, err)
	}
	for _, path := range files {
		f, err := LoadFile(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if _, err := Resolve(f, Overrides{}); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}
