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
// its first cell has no results.json yet; its Results are then empty and the error nil. Cells
// recorded before cells named their kind get it here (Results.FillKinds).
func ReadRun(dir string) (servebench.Manifest, servebench.Results, error) {
	return readRun(dir, false)
}

// Load reads a run folder's run.json and results.json for reporting: ReadRun, except that a
// folder without results.json is an error saying how to finish the run. The records are not
// read (ReadRecords reads them).
func Load(dir string) (servebench.Manifest, servebench.Results, error) {
	return readRun(dir, true)
}

func readRun(dir string, needResults bool) (servebench.Manifest, servebench.Results, error) {
	var m servebench.Manifest
	var res servebench.Results
	if err := readJSON(filepath.Join(dir, ManifestFile), &m); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return m, res, fmt.Errorf("%s holds no run: it has no %s (name a run folder; servebench runs lists them)", dir, ManifestFile)
		}
		return m, res, err
	}
	if err := readJSON(filepath.Join(dir, ResultsFile), &res); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return m, res, err
		}
		if needResults {
			return m, res, fmt.Errorf("the run has no %s: it may still be running or was stopped before its first cell; continue it with servebench run --resume %s", ResultsFile, dir)
		}
	}
	res.FillKinds()
	return m, res, nil
}
