package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	sqlitedrv "modernc.org/sqlite" // pure-Go SQLite, driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/stats"
)

// IndexEnv names the environment variable that chooses the runs index when --index is not
// given: a file path (SQLite) or a postgres:// URL (a shared PostgreSQL store).
const IndexEnv = "SERVEBENCH_INDEX"

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

// Index is the index of runs: a local SQLite file (one machine's runs) or a PostgreSQL
// database that many machines write into (a team's runs). Both hold the same table, created by
// the same numbered migrations, and answer the same queries: one row per run with the columns
// the lists filter and sort on, and the run's run.json and results.json whole, so a run whose
// folder is on another machine can still be shown and compared.
type Index struct {
	db *sql.DB
	d  dialect
	// where names the index in messages: the file path, or the URL without its password.
	where string
}

// IndexEntry is one indexed run.
type IndexEntry struct {
	ID, Dir, Model, Target, Engine, GPU, Status string
	// Label is the run's short name (the plan's metadata.label), which gate and compare accept
	// in place of a run id (the latest run with that label).
	Label string
	// Host is the machine that recorded the run (its host name): Dir is a folder on it.
	Host      string
	Simulated bool
	// Imported is the format (vllm, guidellm, aiperf) of the result file an imported run was
	// read from (Manifest.Imported); "" for a run servebench measured.
	Imported              string
	StartedAt, FinishedAt time.Time
	Cells                 int
	// PeakThroughputTPS is the run's peak system output throughput (tokens/s, stats.Peak).
	PeakThroughputTPS float64
	// SuccessRate is the run's success rate over its measured requests (stats.RunSuccess).
	SuccessRate float64
}

// OpenIndex opens the runs index at location, creating and migrating it: a postgres:// or
// postgresql:// URL opens a PostgreSQL store (the password from PGPASSWORD or ~/.pgpass, never
// from a file servebench writes), anything else that looks like a URL is refused, and a path
// opens (or creates) an SQLite file.
func OpenIndex(location string) (*Index, error) {
	return openIndexAt(context.Background(), location, len(migrations))
}

// openIndexAt opens the index at location and migrates it to schema version (at most
// len(migrations)); tests open an index at an older version to check a later migration.
func openIndexAt(ctx context.Context, location string, version int) (*Index, error) {
	kind, err := indexKind(location)
	if err != nil {
		return nil, err
	}
	if kind == kindPostgres {
		return openPostgres(ctx, location, version)
	}
	return openSQLite(ctx, location, version)
}

func openSQLite(ctx context.Context, path string, version int) (*Index, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, err
	}
	ix := &Index{db: db, d: sqlite, where: path}
	if err := migrateBusy(ctx, ix, version); err != nil {
		db.Close()
		return nil, fmt.Errorf("runs index %s: %w", path, err)
	}
	return ix, nil
}

// migrateBusy migrates a SQLite index, trying again for up to 15 s while another process holds
// it (SQLITE_BUSY). busy_timeout covers most waits, but SQLite answers BUSY at once, without
// its busy handler, where waiting could deadlock: two connections turning a new file into WAL
// mode together, or a reader upgrading to a writer. Writers opening one new index at the same
// moment (many machines' first run) meet exactly that.
func migrateBusy(ctx context.Context, ix *Index, version int) error {
	wait := 10 * time.Millisecond
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := ix.migrate(ctx, version)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY ("database is locked"), by the driver's
// result code (*sqlite.Error; an extended code such as SQLITE_BUSY_SNAPSHOT carries the
// primary code in its low byte), not by its message.
func isBusy(err error) bool {
	var se *sqlitedrv.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// Where names the index for messages: its file path, or its URL without the password.
func (ix *Index) Where() string { return ix.where }

// Put records a run, replacing an earlier entry with the same id. It stores run.json and
// results.json whole beside the entry's columns.
func (ix *Index) Put(dir string, m servebench.Manifest, res servebench.Results) error {
	return ix.PutContext(context.Background(), dir, m, res)
}

// PutContext is Put with a context.
func (ix *Index) PutContext(ctx context.Context, dir string, m servebench.Manifest, res servebench.Results) error {
	e := Entry(dir, m, res)
	e.Host, _ = os.Hostname()
	mb, err := json.Marshal(m)
	if err != nil {
		return err
	}
	rb, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = ix.db.ExecContext(ctx, ix.d.rebind(`INSERT INTO runs (id, dir, host, label, model, target, engine, gpu, status, simulated,
		imported, started_at, finished_at, cells, peak_tps, success_rate, manifest, results)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT(id) DO UPDATE SET dir=excluded.dir, host=excluded.host, label=excluded.label, model=excluded.model,
		target=excluded.target, engine=excluded.engine, gpu=excluded.gpu, status=excluded.status, simulated=excluded.simulated,
		imported=excluded.imported, started_at=excluded.started_at, finished_at=excluded.finished_at, cells=excluded.cells,
		peak_tps=excluded.peak_tps, success_rate=excluded.success_rate, manifest=excluded.manifest, results=excluded.results`),
		e.ID, e.Dir, e.Host, e.Label, e.Model, e.Target, e.Engine, e.GPU, e.Status, e.Simulated, e.Imported,
		ix.d.timeArg(e.StartedAt), ix.d.timeArg(e.FinishedAt), e.Cells, e.PeakThroughputTPS, e.SuccessRate,
		ix.d.jsonArg(mb), ix.d.jsonArg(rb))
	return ix.d.clean(err)
}

// Entry is the index entry of the run in dir: what it ran against (Manifest.TargetName,
// Manifest.EngineName), its cells, its peak system output throughput (stats.Peak) and its
// success rate (stats.RunSuccess). The benchmark pages list a run by the same entry.
func Entry(dir string, m servebench.Manifest, res servebench.Results) IndexEntry {
	e := IndexEntry{ID: m.ID, Dir: dir, Model: m.Plan.Target.Model, Target: m.TargetName(), Engine: m.EngineName(),
		GPU: m.Plan.Metadata.GPU, Label: m.Plan.Metadata.Label, Status: m.Status, Simulated: m.Simulated,
		StartedAt: m.StartedAt.UTC(), FinishedAt: m.FinishedAt.UTC(), Cells: len(res.Cells)}
	if m.Imported != nil {
		e.Imported = m.Imported.Format
	}
	if c := stats.Peak(res.Cells); c != nil {
		e.PeakThroughputTPS = c.SystemOutputThroughputTPS
	}
	_, _, e.SuccessRate = stats.RunSuccess(res.Cells)
	return e
}

const selectEntry = `SELECT id, dir, COALESCE(host, ''), COALESCE(label, ''), model, target, engine, gpu, status, simulated,
	COALESCE(imported, ''), started_at, finished_at, cells, peak_tps, success_rate FROM runs`

// timeCol scans a time column: RFC 3339 text in SQLite, timestamptz in PostgreSQL.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*c.t = time.Time{}
	case time.Time:
		*c.t = v.UTC()
	case string:
		*c.t, _ = time.Parse(time.RFC3339Nano, v)
	case []byte:
		*c.t, _ = time.Parse(time.RFC3339Nano, string(v))
	default:
		return fmt.Errorf("a time column holds %T", v)
	}
	return nil
}

func scanEntries(rows *sql.Rows) ([]IndexEntry, error) {
	defer rows.Close()
	var out []IndexEntry
	for rows.Next() {
		var e IndexEntry
		if err := rows.Scan(&e.ID, &e.Dir, &e.Host, &e.Label, &e.Model, &e.Target, &e.Engine, &e.GPU, &e.Status, &e.Simulated, &e.Imported,
			timeCol{&e.StartedAt}, timeCol{&e.FinishedAt}, &e.Cells, &e.PeakThroughputTPS, &e.SuccessRate); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// List returns every run, newest first.
func (ix *Index) List(ctx context.Context) ([]IndexEntry, error) {
	rows, err := ix.db.QueryContext(ctx, selectEntry+` ORDER BY started_at DESC, id DESC`)
	if err != nil {
		return nil, ix.d.clean(err)
	}
	return scanEntries(rows)
}

// Lookup finds a run by its id or a unique prefix of it.
func (ix *Index) Lookup(ctx context.Context, idOrPrefix string) (IndexEntry, error) {
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(idOrPrefix)
	rows, err := ix.db.QueryContext(ctx, ix.d.rebind(selectEntry+` WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id`), idOrPrefix, esc+"%")
	if err != nil {
		return IndexEntry{}, ix.d.clean(err)
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
		return IndexEntry{}, fmt.Errorf("%w %q in the index (servebench runs lists them)", ErrNoRun, idOrPrefix)
	case 1:
		return list[0], nil
	}
	var ids []string
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	return IndexEntry{}, errors.New("run prefix " + idOrPrefix + " is ambiguous: " + strings.Join(ids, ", "))
}

// ErrNoRun is the error of Lookup and Latest when no run matches.
var ErrNoRun = errors.New("no run")

// Latest finds the newest run with label (the plan's metadata.label), by its start time.
func (ix *Index) Latest(ctx context.Context, label string) (IndexEntry, error) {
	rows, err := ix.db.QueryContext(ctx, ix.d.rebind(selectEntry+` WHERE label = ? ORDER BY started_at DESC, id DESC LIMIT 1`), label)
	if err != nil {
		return IndexEntry{}, ix.d.clean(err)
	}
	list, err := scanEntries(rows)
	if err != nil {
		return IndexEntry{}, err
	}
	if len(list) == 0 {
		return IndexEntry{}, fmt.Errorf("%w labelled %q in the index (a run's label is metadata.label in its plan)", ErrNoRun, label)
	}
	return list[0], nil
}

// Documents returns a run's run.json and results.json as the index stored them when the run
// was recorded. ok is false for a run recorded before the index kept them (only its entry).
// Cells recorded before cells named their kind get it here (Results.FillKinds).
func (ix *Index) Documents(ctx context.Context, id string) (m servebench.Manifest, res servebench.Results, ok bool, err error) {
	var mb, rb []byte
	err = ix.db.QueryRowContext(ctx, ix.d.rebind(`SELECT manifest, results FROM runs WHERE id = ?`), id).Scan(&mb, &rb)
	if errors.Is(err, sql.ErrNoRows) {
		return m, res, false, fmt.Errorf("%w %q in the index (servebench runs lists them)", ErrNoRun, id)
	}
	if err != nil {
		return m, res, false, ix.d.clean(err)
	}
	if len(mb) == 0 || len(rb) == 0 {
		return m, res, false, nil
	}
	if err := json.Unmarshal(mb, &m); err != nil {
		return m, res, false, fmt.Errorf("run %s: its stored run.json does not decode: %w", id, err)
	}
	if err := json.Unmarshal(rb, &res); err != nil {
		return m, res, false, fmt.Errorf("run %s: its stored results.json does not decode: %w", id, err)
	}
	res.FillKinds()
	return m, res, true, nil
}

// Close closes the database.
func (ix *Index) Close() error { return ix.db.Close() }

// TargetKind says what a run measured, as the runs list shows it: "SIMULATED" for servebench's
// simulated engine, "imported (FORMAT)" for a run read from another tool's result file
// (servebench import), "real" for a server servebench measured.
func TargetKind(e IndexEntry) string {
	switch {
	case e.Imported != "" && e.Simulated:
		return "imported (" + e.Imported + "), SIMULATED"
	case e.Imported != "":
		return "imported (" + e.Imported + ")"
	case e.Simulated:
		return "SIMULATED"
	}
	return "real"
}
