package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/servebench/servebench"
)

// ReadRun reads a run folder's run.json and results.json without its records: what a page
// showing the run needs, cheap enough to call on every view. A run still before the end of
// its first cell has no results.json yet; its Results are then empty and the error nil.
func ReadRun(dir string) (servebench.Manifest, servebench.Results, error) {
	var m servebench.Manifest
	var res servebench.Results
	if err := readJSON(filepath.Join(dir, ManifestFile), &m); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return m, res, fmt.Errorf("%s holds no run: it has no %s (name a run folder; servebench runs lists them)", dir, ManifestFile)
		}
		return m, res, err
	}
	if err := readJSON(filepath.Join(dir, ResultsFile), &res); err != nil && !errors.Is(err, os.ErrNotExist) {
		return m, res, err
	}
	return m, res, nil
}
