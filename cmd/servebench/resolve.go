package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/store"
)

// resolvedRun is a run named on the command line: by its folder, or by its id or label in the
// runs index.
type resolvedRun struct {
	// How says how the name was resolved ("folder runs/a", "run 2026… in the index", "latest
	// run labelled H100 in the index").
	How      string
	Manifest servebench.Manifest
	Results  servebench.Results
}

// runResolver resolves run names, opening the runs index only when a name is not a folder.
type runResolver struct {
	e     *env
	index string // --index
	ix    *store.Index
}

func (r *runResolver) close() {
	if r.ix != nil {
		r.ix.Close()
	}
}

// resolve finds the run name names: a run folder (holding run.json), else a run id or unique id
// prefix in the runs index, else the latest run in the index with that label. A name that
// looks like a path (it has a separator) is only ever a folder.
func (r *runResolver) resolve(ctx context.Context, name string) (resolvedRun, error) {
	if _, err := os.Stat(filepath.Join(name, store.ManifestFile)); err == nil {
		m, res, err := store.Load(name)
		if err != nil {
			return resolvedRun{}, withCode(exitUsage, fmt.Errorf("%s is not a readable run folder: %w", name, err))
		}
		return resolvedRun{How: "folder " + name, Manifest: m, Results: res}, nil
	}
	if strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, '/') || name == "." || name == ".." {
		return resolvedRun{}, withCode(exitUsage, fmt.Errorf("%s is not a run folder (it has no %s)", name, store.ManifestFile))
	}
	if r.ix == nil {
		loc, err := indexLocation(r.e, r.index)
		if err != nil {
			return resolvedRun{}, err
		}
		if err := store.CheckLocation(loc); err != nil {
			return resolvedRun{}, withCode(exitUsage, err)
		}
		if !strings.Contains(loc, "://") {
			if _, err := os.Stat(loc); err != nil {
				return resolvedRun{}, withCode(exitUsage, fmt.Errorf("%s is not a run folder, and there is no runs index at %s to look it up as a run id or label", name, loc))
			}
		}
		ix, err := openIndex(r.e, r.index)
		if err != nil {
			return resolvedRun{}, err
		}
		r.ix = ix
	}
	e, err := r.ix.Lookup(ctx, name)
	how := "run " + name + " in the index"
	if errors.Is(err, store.ErrNoRun) {
		e, err = r.ix.Latest(ctx, name)
		how = fmt.Sprintf("the latest run labelled %q in the index", name)
		if errors.Is(err, store.ErrNoRun) {
			return resolvedRun{}, withCode(exitUsage, fmt.Errorf("%s is not a run folder, nor a run id or label in the runs index %s (servebench runs lists them)", name, r.ix.Where()))
		}
	}
	if err != nil {
		return resolvedRun{}, withCode(exitUsage, err)
	}
	how += " (" + e.ID + ")"
	m, res, ok, err := r.ix.Documents(ctx, e.ID)
	if err != nil {
		return resolvedRun{}, withCode(exitError, err)
	}
	if !ok { // recorded before the index kept documents: read its folder
		lm, lres, lerr := store.Load(e.Dir)
		if lerr != nil {
			return resolvedRun{}, withCode(exitUsage, fmt.Errorf("%s: the index keeps only its summary and its folder %s cannot be read: %w", how, e.Dir, lerr))
		}
		m, res = lm, lres
	}
	return resolvedRun{How: how, Manifest: m, Results: res}, nil
}
