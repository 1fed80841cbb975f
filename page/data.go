package page

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/capacity"
	"github.com/servebench/servebench/stats"
	"github.com/servebench/servebench/store"
)

// APIVersion names the JSON documents the pages use and /api/v1 serves (docs/api.md). A field
// is only ever added within a version; a change that could break a reader bumps it.
const APIVersion = "servebench.page/v1"

// Index lists the recorded runs (store.Index does).
type Index interface {
	List(ctx context.Context) ([]store.IndexEntry, error)
}

// Documents is an index that keeps each run's run.json and results.json whole (store.Index
// does): the pages show a run from them when its folder cannot be read here, e.g. a run that
// another machine recorded into a shared store.
type Documents interface {
	Documents(ctx context.Context, id string) (servebench.Manifest, servebench.Results, bool, error)
}

// Source is where the pages find their runs: the runs index, or, when run folders are named
// (Dirs), those runs only (a run still in progress is not in the index until it ends; the
// index's other runs, other people's included, are not published by a serve or site that
// names its runs).
type Source struct {
	Index Index
	Dirs  []string
}

// RunSummary is one run in the list of runs: who, what, where, and the headline numbers.
type RunSummary struct {
	ID string `json:"id"`
	// Label is the run's short name (the plan's metadata.label, run.json's label; empty when
	// none was given): the pages show it wherever they name the run, the id beside it.
	Label    string `json:"label,omitempty"`
	Model    string `json:"model"`
	Hardware string `json:"hardware"`
	Engine   string `json:"engine"`
	Target   string `json:"target"`
	// Status: running, completed, interrupted, failed, or missing (the folder is gone).
	Status     string    `json:"status"`
	Simulated  bool      `json:"simulated"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Cells      int       `json:"cells"`
	// PeakThroughputTPS is the run's peak system output throughput (tokens/s, stats.Peak).
	PeakThroughputTPS float64 `json:"peak_throughput_tps"`
	// PeakThroughputCI95 is that cell's 95% interval (tokens/s); only in a run's document (the
	// list of runs is read from the index, which does not keep it), and absent when the cell
	// has none.
	PeakThroughputCI95 *servebench.Interval `json:"peak_throughput_tps_ci95,omitempty"`
	// PeakThroughputCI95Withheld is set instead when that cell had an interval from fewer
	// successful requests than stats.MinIntervalSamples: written "n<min".
	PeakThroughputCI95Withheld bool `json:"peak_throughput_tps_ci95_withheld,omitempty"`
	// SuccessRate is the run's success rate over its measured requests (stats.RunSuccess).
	SuccessRate float64 `json:"success_rate"`
	// Capacity is each use case's limit as the run decided it.
	Capacity []LimitSummary `json:"capacity"`
	// Problem says why the run's folder could not be read; empty when it could.
	Problem string `json:"problem,omitempty"`
}

// LimitSummary is a use case's capacity limit in short.
type LimitSummary struct {
	UseCase string               `json:"use_case"`
	Title   string               `json:"title"`
	Label   string               `json:"label"`
	Kind    servebench.LimitKind `json:"kind"`
	Limit   *int                 `json:"limit"`
	// LimitRange is the levels the run's data cannot tell apart from the limit at 95%
	// (the capacity result's limit_range; absent for a lower bound or not viable).
	LimitRange *[2]int `json:"limit_range,omitempty"`
}

// RunDoc is everything the pages show of one run: its summary, what it measured and how, and
// results.json as the run wrote it (every cell, every capacity search).
type RunDoc struct {
	API      string                `json:"api"`
	Run      RunSummary            `json:"run"`
	Server   servebench.ServerInfo `json:"server"`
	Metadata servebench.Metadata   `json:"metadata"`
	// Sizing is the run's sizing plan (GPUs per replica, price per GPU-hour as declared), which
	// the frontier calculator starts from as the report does.
	Sizing  servebench.SizingPlan `json:"sizing"`
	Results servebench.Results    `json:"results"`
}

// RunList is the list of runs, newest first.
type RunList struct {
	API  string       `json:"api"`
	Runs []RunSummary `json:"runs"`
}

// run is a run found through the source.
type run struct {
	dir   string
	entry *store.IndexEntry
}

// safeID matches the run ids the pages link to: used as a path component, they must not be
// able to climb out of a folder or need escaping.
var safeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// runs finds every run of the source, by id.
func (s Source) runs(ctx context.Context) (map[string]run, error) {
	out := map[string]run{}
	if s.Index != nil {
		list, err := s.Index.List(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the runs index: %w", err)
		}
		for i := range list {
			if safeID.MatchString(list[i].ID) {
				out[list[i].ID] = run{dir: list[i].Dir, entry: &list[i]}
			}
		}
	}
	if len(s.Dirs) > 0 {
		// the runs named, and nothing else: the index only lends them their entry
		indexed := out
		out = map[string]run{}
		defer func() {
			for id, r := range out {
				if e, ok := indexed[id]; ok && r.entry == nil {
					r.entry = e.entry
					out[id] = r
				}
			}
		}()
	}
	for _, d := range s.Dirs {
		m, _, err := store.ReadRun(d)
		if err != nil {
			return nil, fmt.Errorf("%s is not a readable run folder: %w", d, err)
		}
		if !safeID.MatchString(m.ID) {
			return nil, fmt.Errorf("%s: run id %q cannot be used in a link", d, m.ID)
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		prev := out[m.ID]
		out[m.ID] = run{dir: abs, entry: prev.entry}
	}
	return out, nil
}

// List returns the summaries of every run, newest first.
func (s Source) List(ctx context.Context) (RunList, error) {
	runs, err := s.runs(ctx)
	if err != nil {
		return RunList{}, err
	}
	l := RunList{API: APIVersion, Runs: []RunSummary{}}
	for id, r := range runs {
		doc, err := s.load(ctx, id, r)
		if err != nil {
			l.Runs = append(l.Runs, missing(id, r, err))
			continue
		}
		l.Runs = append(l.Runs, doc.Run)
	}
	sort.Slice(l.Runs, func(i, j int) bool {
		a, b := l.Runs[i], l.Runs[j]
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.After(b.StartedAt)
		}
		return a.ID > b.ID
	})
	return l, nil
}

// ErrNotFound is returned by Run for an id the source does not hold.
var ErrNotFound = fmt.Errorf("no such run")

// Run returns one run's document.
func (s Source) Run(ctx context.Context, id string) (RunDoc, error) {
	runs, err := s.runs(ctx)
	if err != nil {
		return RunDoc{}, err
	}
	r, ok := runs[id]
	if !ok {
		return RunDoc{}, fmt.Errorf("%w %q (servebench runs lists the recorded ones)", ErrNotFound, id)
	}
	return s.load(ctx, id, r)
}

// read reads a run's run.json and results.json from its folder or, where the folder cannot be
// read here, from the documents the index keeps of it; the error is the folder's when neither
// has the run.
func (s Source) read(ctx context.Context, id string, r run) (servebench.Manifest, servebench.Results, error) {
	m, res, err := store.ReadRun(r.dir)
	if err == nil && m.ID != id {
		err = fmt.Errorf("%s now holds run %s, not %s", r.dir, m.ID, id)
	}
	if err == nil {
		return m, res, nil
	}
	if d, ok := s.Index.(Documents); ok && r.entry != nil {
		if sm, sres, ok, derr := d.Documents(ctx, id); derr == nil && ok {
			return sm, sres, nil
		}
	}
	return m, res, err
}

// load reads a run into its document.
func (s Source) load(ctx context.Context, id string, r run) (RunDoc, error) {
	m, res, err := s.read(ctx, id, r)
	if err != nil {
		return RunDoc{}, err
	}
	sum := summary(store.Entry(r.dir, m, res))
	if pc := stats.Peak(res.Cells); pc != nil {
		if stats.IntervalShown(pc.RequestsSucceeded) {
			sum.PeakThroughputCI95 = pc.SystemOutputThroughputCI95
		} else {
			sum.PeakThroughputCI95Withheld = pc.SystemOutputThroughputCI95 != nil
		}
	}
	m.Server.Raw = nil // the raw bodies the server returned: large, and not for the pages
	for _, c := range res.Capacity {
		sum.Capacity = append(sum.Capacity, LimitSummary{UseCase: c.UseCase, Title: c.Title, Label: capacity.LimitLabel(c), Kind: c.LimitKind, Limit: c.Limit, LimitRange: c.LimitRange})
	}
	if res.Cells == nil {
		res.Cells = []servebench.CellResult{}
	}
	if res.Capacity == nil {
		res.Capacity = []servebench.CapacityResult{}
	}
	return RunDoc{API: APIVersion, Run: sum, Server: m.Server, Metadata: m.Plan.Metadata, Sizing: m.Plan.Sizing, Results: res}, nil
}

// summary is a run's line in the list of runs, from its index entry.
func summary(e store.IndexEntry) RunSummary {
	s := RunSummary{ID: e.ID, Label: e.Label, Model: e.Model, Hardware: e.GPU, Engine: e.Engine, Target: e.Target, Status: e.Status,
		Simulated: e.Simulated, StartedAt: e.StartedAt.UTC(), Cells: e.Cells, PeakThroughputTPS: e.PeakThroughputTPS,
		SuccessRate: e.SuccessRate, Capacity: []LimitSummary{}}
	if !e.FinishedAt.IsZero() {
		s.FinishedAt = e.FinishedAt.UTC()
	}
	return s
}

// missing is the summary of a run whose folder cannot be read: what the index remembers.
func missing(id string, r run, err error) RunSummary {
	s := RunSummary{ID: id, Capacity: []LimitSummary{}}
	if r.entry != nil {
		s = summary(*r.entry)
	}
	s.Status, s.Problem = "missing", err.Error()
	return s
}
