package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // pure-Go SQLite, driver "sqlite"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// DefaultIndexPath is $SERVEBENCH_DATA_DIR/runs.db, else $XDG_DATA_HOME/servebench/runs.db,
// else ~/.local/share/servebench/runs.db.
func DefaultIndexPath() (string, error) {
	if d := os.Getenv("SERVEBENCH_DATA_DIR"); d != "" {
		return filepath.Join(d, "runs.db"), nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "servebench", "runs.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for the runs index: set SERVEBENCH_DATA_DIR (%w)", err)
	}
	return filepath.Join(home, ".local", "share", "servebench", "runs.db"), nil
}

// Index is the SQLite index of runs.
type Index struct{ db *sql.DB }

// IndexEntry is one indexed run.
type IndexEntry struct {
	ID, Dir, Model, Target, Engine, GPU, Status string
	Simulated                                   bool
	StartedAt, FinishedAt                       time.Time
	Cells                                       int
	// PeakThroughputTPS is the run's peak system output throughput (tokens/s, stats.Peak).
	PeakThroughputTPS float64
	// SuccessRate is the run's success rate over its measured requests (stats.RunSuccess).
	SuccessRate float64
}

var migrations = []string{
	`CREATE TABLE runs (
		id TEXT PRIMARY KEY, dir TEXT NOT NULL, model TEXT, target TEXT, engine TEXT, gpu TEXT,
		status TEXT, simulated INTEGER NOT NULL DEFAULT 0, started_at TEXT, finished_at TEXT,
		cells INTEGER, peak_tps REAL, success_rate REAL)`,
	`CREATE INDEX runs_started ON runs(started_at)`,
}

// OpenIndex opens (creating and migrating) the index at path.
func OpenIndex(path string) (*Index, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, err
	}
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("runs index %s: %w", path, err)
	}
	for i := v; i < len(migrations); i++ {
		if _, err := db.Exec(migrations[i]); err != nil {
			db.Close()
			return nil, fmt.Errorf("runs index %s: migration %d: %w", path, i+1, err)
		}
		if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, i+1)); err != nil {
			db.Close()
			return nil, err
		}
	}
	return &Index{db: db}, nil
}

// Put records a run, replacing an earlier entry with the same id.
func (ix *Index) Put(dir string, m servebench.Manifest, res servebench.Results) error {
	e := Entry(dir, m, res)
	_, err := ix.db.Exec(`INSERT INTO runs (id, dir, model, target, engine, gpu, status, simulated, started_at, finished_at, cells, peak_tps, success_rate)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT(id) DO UPDATE SET dir=excluded.dir, model=excluded.model, target=excluded.target, engine=excluded.engine,
		gpu=excluded.gpu, status=excluded.status, simulated=excluded.simulated, started_at=excluded.started_at,
		finished_at=excluded.finished_at, cells=excluded.cells, peak_tps=excluded.peak_tps, success_rate=excluded.success_rate`,
		e.ID, e.Dir, e.Model, e.Target, e.Engine, e.GPU, e.Status, e.Simulated,
		e.StartedAt.Format(time.RFC3339Nano), e.FinishedAt.Format(time.RFC3339Nano), e.Cells, e.PeakThroughputTPS, e.SuccessRate)
	return err
}

// Entry is the index entry of the run in dir: what it ran against (Manifest.TargetName,
// Manifest.EngineName), its cells, its peak system output throughput (stats.Peak) and its
// success rate (stats.RunSuccess). The benchmark pages list a run by the same entry.
func Entry(dir string, m servebench.Manifest, res servebench.Results) IndexEntry {
	e := IndexEntry{ID: m.ID, Dir: dir, Model: m.Plan.Target.Model, Target: m.TargetName(), Engine: m.EngineName(),
		GPU: m.Plan.Metadata.GPU, Status: m.Status, Simulated: m.Simulated,
		StartedAt: m.StartedAt.UTC(), FinishedAt: m.FinishedAt.UTC(), Cells: len(res.Cells)}
	if c := stats.Peak(res.Cells); c != nil {
		e.PeakThroughputTPS = c.SystemOutputThroughputTPS
	}
	_, _, e.SuccessRate = stats.RunSuccess(res.Cells)
	return e
}

const selectEntry = `SELECT id, dir, model, target, engine, gpu, status, simulated, started_at, finished_at, cells, peak_tps, success_rate FROM runs`

func scanEntries(rows *sql.Rows) ([]IndexEntry, error) {
	defer rows.Close()
	var out []IndexEntry
	for rows.Next() {
		var e IndexEntry
		var started, finished string
		if err := rows.Scan(&e.ID, &e.Dir, &e.Model, &e.Target, &e.Engine, &e.GPU, &e.Status, &e.Simulated,
			&started, &finished, &e.Cells, &e.PeakThroughputTPS, &e.SuccessRate); err != nil {
			return nil, err
		}
		e.StartedAt, _ = time.Parse(time.RFC3339Nano, started)
		e.FinishedAt, _ = time.Parse(time.RFC3339Nano, finished)
		out = append(out, e)
	}
	return out, rows.Err()
}

// List returns every run, newest first.
func (ix *Index) List(ctx context.Context) ([]IndexEntry, error) {
	rows, err := ix.db.QueryContext(ctx, selectEntry+` ORDER BY started_at DESC, id DESC`)
	if err != nil {
		return nil, err
	}
	return scanEntries(rows)
}

// Lookup finds a run by its id or a unique prefix of it.
func (ix *Index) Lookup(ctx context.Context, idOrPrefix string) (IndexEntry, error) {
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(idOrPrefix)
	rows, err := ix.db.QueryContext(ctx, selectEntry+` WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id`, idOrPrefix, esc+"%")
	if err != nil {
		return IndexEntry{}, err
	}
	list, err := scanEntries(rows)
	if err != nil {
		return IndexEntry{}, err
	}
	for _, e := range list {
		if e.ID == idOrPrefix {
			return e, nil
		}
	}
	switch len(list) {
	case 0:
		return IndexEntry{}, fmt.Errorf("no run %q in the index (servebench runs lists them)", idOrPrefix)
	case 1:
		return list[0], nil
	}
	var ids []string
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	return IndexEntry{}, errors.New("run prefix " + idOrPrefix + " is ambiguous: " + strings.Join(ids, ", "))
}

// Close closes the database.
func (ix *Index) Close() error { return ix.db.Close() }
