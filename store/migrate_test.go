package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench"
)

// An index written by a servebench at schema version 3 (before the imported column) gets the
// column filled from each row's stored run.json when a newer servebench opens it (migration
// 4): an imported run's row names its import format, a measured run's row and a row recorded
// before the index kept run.json (manifest NULL) name none, and rows at version 3 keep every
// other column.
func TestMigration4BackfillsImported(t *testing.T) {
	eachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		old, err := openIndexAt(ctx, location, 3)
		if err != nil {
			t.Fatal(err)
		}
		if v := schemaVersion(t, old); v != 3 {
			t.Fatalf("the old index is at version %d, want 3", v)
		}
		if _, err := old.db.ExecContext(ctx, `SELECT imported FROM runs`); err == nil {
			t.Fatal("an index at version 3 already has the imported column: the test does not start before migration 4")
		}
		measured, fromVLLM, fromAIPerf := manifest("20260101-measured"), manifest("20260102-vllm"), manifest("20260103-aiperf")
		fromVLLM.Imported = &servebench.ImportSource{Tool: "vllm bench serve", Format: "vllm", File: "r.json", SHA256: "ab"}
		fromAIPerf.Imported = &servebench.ImportSource{Tool: "AIPerf", Format: "aiperf", File: "p.json", SHA256: "cd"}
		insert := func(m *servebench.Manifest, id, label string) {
			t.Helper()
			var doc any // NULL: a row recorded before the index kept run.json
			if m != nil {
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				doc = old.d.jsonArg(b)
			}
			// the columns of version 3, as that servebench wrote them
			_, err := old.db.ExecContext(ctx, old.d.rebind(`INSERT INTO runs (id, dir, host, label, model, target, engine, gpu, status,
				simulated, started_at, finished_at, cells, peak_tps, success_rate, manifest, results)
				VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`),
				id, "/runs/"+id, "box", label, "m", "http://x", "vllm", "H100", "completed", false,
				old.d.timeArg(manifest("").StartedAt), old.d.timeArg(manifest("").StartedAt), 1, 100.0, 1.0, doc, doc)
			if err != nil {
				t.Fatal(err)
			}
		}
		insert(&measured, measured.ID, "a")
		insert(&fromVLLM, fromVLLM.ID, "b")
		insert(&fromAIPerf, fromAIPerf.ID, "c")
		insert(nil, "20251231-no-documents", "d")
		if err := old.Close(); err != nil {
			t.Fatal(err)
		}

		ix, err := OpenIndex(location) // a newer servebench: migrations 4 onwards
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		if v := schemaVersion(t, ix); v != SchemaVersion() {
			t.Fatalf("the migrated index is at version %d, want %d", v, SchemaVersion())
		}
		list, err := ix.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{measured.ID: "", fromVLLM.ID: "vllm", fromAIPerf.ID: "aiperf", "20251231-no-documents": ""}
		if len(list) != len(want) {
			t.Fatalf("%d runs after the migration, want %d: %+v", len(list), len(want), list)
		}
		for _, e := range list {
			if e.Imported != want[e.ID] {
				t.Errorf("%s: imported %q after the migration, want %q", e.ID, e.Imported, want[e.ID])
			}
			if e.GPU != "H100" || e.Host != "box" || e.Cells != 1 || e.PeakThroughputTPS != 100 {
				t.Errorf("%s: the migration changed the row's other columns: %+v", e.ID, e)
			}
		}
		// the NULL an imported column holds in a row without run.json is NULL, not ''
		var null sql.NullString
		if err := ix.db.QueryRowContext(ctx, ix.d.rebind(`SELECT imported FROM runs WHERE id = ?`), "20251231-no-documents").Scan(&null); err != nil || null.Valid {
			t.Errorf("a row without run.json: imported %+v %v, want NULL", null, err)
		}
		// opening it again applies nothing twice
		again, err := OpenIndex(location)
		if err != nil {
			t.Fatalf("reopening the migrated index: %v", err)
		}
		again.Close()
	})
}

// schemaVersion is the version an index records: PRAGMA user_version in SQLite, the highest
// row of servebench_schema in PostgreSQL.
func schemaVersion(t *testing.T, ix *Index) int {
	t.Helper()
	q := `PRAGMA user_version`
	if ix.d.postgres {
		q = `SELECT MAX(version) FROM servebench_schema`
	}
	var v int
	if err := ix.db.QueryRow(q).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// isBusy tells SQLite's SQLITE_BUSY by the driver's result code, wrapped or not, and nothing
// else: not another SQLite error, not an error that merely says "database is locked".
func TestIsBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	holder, other := open(), open()
	ctx := context.Background()
	hc, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	if _, err := hc.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	defer hc.ExecContext(ctx, `ROLLBACK`)
	_, busy := other.ExecContext(ctx, `BEGIN IMMEDIATE`) // the write lock is held: SQLITE_BUSY at once
	_, syntax := other.ExecContext(ctx, `SELEC 1`)
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"the driver's SQLITE_BUSY", busy, true},
		{"wrapped, as migrate returns it", fmt.Errorf("migration 4: %w", busy), true},
		{"another SQLite error", syntax, false},
		{"a message that only reads like it", errors.New("database is locked (SQLITE_BUSY)"), false},
		{"none", nil, false},
	} {
		if got := isBusy(tc.err); got != tc.want {
			t.Errorf("%s (%v): isBusy %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
