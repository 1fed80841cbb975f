package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // PostgreSQL for database/sql, pure Go
)

// The kinds of runs index a location names.
const (
	kindSQLite   = "sqlite"
	kindPostgres = "postgres"
)

// schemeRE matches a location that starts like a URL ("name:"); a one-letter scheme is a
// Windows drive, not a URL.
var schemeRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]+):`)

// LocationError is the error of an index location that names no kind of index.
type LocationError struct{ msg string }

func (e *LocationError) Error() string { return e.msg }

func locationErr(format string, args ...any) error {
	return &LocationError{msg: fmt.Sprintf(format, args...)}
}

// indexKind says which kind of index location names: a postgres:// or postgresql:// URL is
// PostgreSQL, anything else that starts like a URL is refused (it used to become a folder
// named after its scheme), and the rest is an SQLite file path.
func indexKind(location string) (string, error) {
	if location == "" {
		return "", locationErr("no runs index named: give --index a file path or a postgres:// URL")
	}
	m := schemeRE.FindStringSubmatch(location)
	if m == nil {
		return kindSQLite, nil
	}
	switch strings.ToLower(m[1]) {
	case "postgres", "postgresql":
		if !strings.HasPrefix(location[len(m[0]):], "//") {
			return "", locationErr("runs index %s: a PostgreSQL store is named by a URL, postgres://USER@HOST:PORT/DATABASE", RedactLocation(location))
		}
		return kindPostgres, nil
	}
	return "", locationErr("runs index %s: %q is not a kind of runs index servebench knows; name an SQLite file by its path "+
		"(write ./%s for a file whose name has a colon) or a PostgreSQL store by a postgres:// URL", RedactLocation(location), m[1], strings.SplitN(location, "/", 2)[0])
}

// CheckLocation says whether location names a kind of runs index (a path, or a postgres://
// URL), without opening it.
func CheckLocation(location string) error {
	_, err := indexKind(location)
	return err
}

// RedactLocation is location fit to print: a URL's password (in its user part or a password
// parameter) is replaced by xxxxx; a path is returned as it is.
func RedactLocation(location string) string {
	m := schemeRE.FindStringSubmatch(location)
	if m == nil {
		return location
	}
	u, err := url.Parse(location)
	if err != nil {
		return m[1] + "://… (a URL that does not parse)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// dialect is what differs between the SQLite and the PostgreSQL index: placeholders, the types
// of time and JSON arguments, the migrations, and the secret to keep out of error messages.
type dialect struct {
	postgres bool
	// secret is the password written in the location, if any: removed from every error.
	secret string
}

var sqlite = dialect{}

// rebind turns the ? placeholders of q into PostgreSQL's $1, $2, ...
func (d dialect) rebind(q string) string {
	if !d.postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// timeArg is t as the time columns hold it: RFC 3339 text in SQLite (UTC, so it sorts as
// text), timestamptz in PostgreSQL (NULL for the zero time).
func (d dialect) timeArg(t time.Time) any {
	if !d.postgres {
		return t.UTC().Format(time.RFC3339Nano)
	}
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

// jsonArg is a JSON document as the document columns take it: text in SQLite, jsonb in
// PostgreSQL. jsonb cannot hold the character U+0000, which a server's reply may carry: it is
// stored as U+FFFD.
func (d dialect) jsonArg(b []byte) any {
	if d.postgres {
		b = bytes.ReplaceAll(b, []byte(`\u0000`), []byte(`\ufffd`))
	}
	return string(b)
}

// clean removes the location's password from an error's text.
func (d dialect) clean(err error) error {
	if err == nil || d.secret == "" || !strings.Contains(err.Error(), d.secret) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), d.secret, "xxxxx"))
}

// migrations are the schema's versions, the same in both dialects: version i+1 is
// migrations[i]. SQLite counts them in PRAGMA user_version, PostgreSQL in the table
// servebench_schema. Only ever append.
var migrations = []struct{ sqlite, postgres []string }{
	{ // 1: one row per run
		sqlite: []string{`CREATE TABLE runs (
		id TEXT PRIMARY KEY, dir TEXT NOT NULL, model TEXT, target TEXT, engine TEXT, gpu TEXT,
		status TEXT, simulated INTEGER NOT NULL DEFAULT 0, started_at TEXT, finished_at TEXT,
		cells INTEGER, peak_tps REAL, success_rate REAL)`},
		postgres: []string{`CREATE TABLE runs (
		id TEXT PRIMARY KEY, dir TEXT NOT NULL, model TEXT, target TEXT, engine TEXT, gpu TEXT,
		status TEXT, simulated BOOLEAN NOT NULL DEFAULT false, started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ,
		cells INTEGER, peak_tps DOUBLE PRECISION, success_rate DOUBLE PRECISION)`},
	},
	{ // 2: the list is newest first
		sqlite:   []string{`CREATE INDEX runs_started ON runs(started_at)`},
		postgres: []string{`CREATE INDEX runs_started ON runs(started_at)`},
	},
	{ // 3: the machine and label of a run, and its run.json and results.json whole
		sqlite: []string{`ALTER TABLE runs ADD COLUMN host TEXT`, `ALTER TABLE runs ADD COLUMN label TEXT`,
			`ALTER TABLE runs ADD COLUMN manifest TEXT`, `ALTER TABLE runs ADD COLUMN results TEXT`,
			`CREATE INDEX runs_label ON runs(label, started_at)`},
		postgres: []string{`ALTER TABLE runs ADD COLUMN host TEXT, ADD COLUMN label TEXT,
			ADD COLUMN manifest JSONB, ADD COLUMN results JSONB`,
			`CREATE INDEX runs_label ON runs(label, started_at)`},
	},
	{ // 4: the tool an imported run was read from (its import format), filled from run.json
		sqlite: []string{`ALTER TABLE runs ADD COLUMN imported TEXT`,
			`UPDATE runs SET imported = json_extract(manifest, '$.imported.format') WHERE manifest IS NOT NULL`},
		postgres: []string{`ALTER TABLE runs ADD COLUMN imported TEXT`,
			`UPDATE runs SET imported = manifest->'imported'->>'format' WHERE manifest IS NOT NULL`},
	},
}

// SchemaVersion is the version of the index's schema this build writes.
func SchemaVersion() int { return len(migrations) }

// migrate brings the index's schema to version (len(migrations), the newest, outside tests),
// in one transaction that holds the database's write lock (SQLite) or an advisory lock
// (PostgreSQL), so processes that open a new index at the same moment apply each migration
// once. An index newer than this build is refused.
func (ix *Index) migrate(ctx context.Context, version int) error {
	conn, err := ix.db.Conn(ctx)
	if err != nil {
		return ix.d.clean(err)
	}
	defer conn.Close()
	exec := func(q string, args ...any) error {
		_, err := conn.ExecContext(ctx, q, args...)
		return ix.d.clean(err)
	}
	var v int
	if ix.d.postgres {
		if err := exec(`BEGIN`); err != nil {
			return err
		}
		// the lock's key is arbitrary; it is released at COMMIT or ROLLBACK
		if err := exec(`SELECT pg_advisory_xact_lock(7151937104)`); err != nil {
			_ = exec(`ROLLBACK`)
			return err
		}
		if err := exec(`CREATE TABLE IF NOT EXISTS servebench_schema (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
			_ = exec(`ROLLBACK`)
			return err
		}
		if err := conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM servebench_schema`).Scan(&v); err != nil {
			_ = exec(`ROLLBACK`)
			return ix.d.clean(err)
		}
	} else {
		if err := exec(`BEGIN IMMEDIATE`); err != nil {
			return err
		}
		if err := conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
			_ = exec(`ROLLBACK`)
			return err
		}
	}
	if v > len(migrations) {
		_ = exec(`ROLLBACK`)
		return fmt.Errorf("the index's schema is version %d, newer than this servebench knows (%d): upgrade servebench", v, len(migrations))
	}
	for i := v; i < min(version, len(migrations)); i++ {
		stmts := migrations[i].sqlite
		if ix.d.postgres {
			stmts = migrations[i].postgres
		}
		for _, s := range stmts {
			if err := exec(s); err != nil {
				_ = exec(`ROLLBACK`)
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		if ix.d.postgres {
			err = exec(`INSERT INTO servebench_schema (version) VALUES ($1)`, i+1)
		} else {
			err = exec(fmt.Sprintf(`PRAGMA user_version = %d`, i+1))
		}
		if err != nil {
			_ = exec(`ROLLBACK`)
			return err
		}
	}
	return exec(`COMMIT`)
}

// openPostgres opens the PostgreSQL store at the URL location and migrates it. The password
// is taken as libpq takes it: PGPASSWORD, ~/.pgpass, or the URL itself (which servebench never
// prints or stores; --index refuses it so it stays out of shell history and ps).
func openPostgres(ctx context.Context, location string, version int) (*Index, error) {
	where := RedactLocation(location)
	d := dialect{postgres: true}
	if u, err := url.Parse(location); err == nil {
		d.secret, _ = u.User.Password()
		if p := u.Query().Get("password"); p != "" {
			d.secret = p
		}
	}
	cfg, err := pgx.ParseConfig(location)
	if err != nil {
		return nil, locationErr("runs index %s: %v", where, d.clean(err))
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("runs index %s: cannot connect: %w (is the server up and the database created? the password comes from PGPASSWORD or ~/.pgpass)", where, d.clean(err))
	}
	ix := &Index{db: db, d: d, where: where}
	if err := ix.migrate(ctx, version); err != nil {
		db.Close()
		return nil, fmt.Errorf("runs index %s: %w", where, err)
	}
	return ix, nil
}
