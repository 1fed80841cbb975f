package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench"
	"github.com/servebench/servebench/internal/pgtest"
)

// eachBackend runs f against a new SQLite index and a new database on a throwaway PostgreSQL
// server (skipped, saying what is missing, where PostgreSQL is not installed).
func eachBackend(t *testing.T, f func(t *testing.T, location string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, filepath.Join(t.TempDir(), "sub", "runs.db")) })
	t.Run("postgres", func(t *testing.T) { f(t, pgtest.Shared(t).CreateDB(t, "store")) })
}

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

func TestIndexKeepsDocumentsAndLabels(t *testing.T) {
	eachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		ix, err := OpenIndex(location)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		res := servebench.Results{Cells: []servebench.CellResult{{SystemOutputThroughputTPS: 12.5, RequestsTotal: 4, RequestsSucceeded: 4}}}
		a, b, c := manifest("20260101-a"), manifest("20260102-b"), manifest("20260103-c")
		a.Plan.Metadata.Label, b.Plan.Metadata.Label, c.Plan.Metadata.Label = "H100 tp1", "H100 tp1", "other"
		b.StartedAt = a.StartedAt.Add(time.Hour)
		c.StartedAt = a.StartedAt.Add(2 * time.Hour)
		a.Server.Version = "nul\x00in a reply" // jsonb cannot hold U+0000
		for i, m := range []servebench.Manifest{a, b, c} {
			if err := ix.Put(fmt.Sprintf("/runs/%d", i), m, res); err != nil {
				t.Fatal(err)
			}
		}
		e, err := ix.Latest(ctx, "H100 tp1")
		if err != nil || e.ID != "20260102-b" || e.Label != "H100 tp1" {
			t.Fatalf("latest with label: %+v %v", e, err)
		}
		if _, err := ix.Latest(ctx, "none such"); !errors.Is(err, ErrNoRun) {
			t.Fatalf("unknown label: %v", err)
		}
		m, r, ok, err := ix.Documents(ctx, "20260102-b")
		if err != nil || !ok {
			t.Fatalf("documents: %v %v", ok, err)
		}
		if m.ID != "20260102-b" || !m.StartedAt.Equal(b.StartedAt) || len(r.Cells) != 1 || r.Cells[0].SystemOutputThroughputTPS != 12.5 {
			t.Fatalf("documents came back as %+v %+v", m, r)
		}
		if _, _, ok, err := ix.Documents(ctx, "20260101-a"); err != nil || !ok {
			t.Fatalf("a run whose reply held U+0000: %v %v", ok, err)
		}
		if _, _, _, err := ix.Documents(ctx, "nope"); !errors.Is(err, ErrNoRun) {
			t.Fatalf("unknown id: %v", err)
		}
		list, err := ix.List(ctx)
		if err != nil || len(list) != 3 || list[0].Host == "" {
			t.Fatalf("list %+v %v", list, err)
		}
	})
}

// Writers that open the same new index at once (many machines starting their first run) each
// apply every migration exactly once between them and all their runs arrive.
func TestIndexConcurrentWriters(t *testing.T) {
	eachBackend(t, func(t *testing.T, location string) {
		const writers = 6
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				ix, err := OpenIndex(location)
				if err != nil {
					errs <- err
					return
				}
				defer ix.Close()
				for i := range 5 {
					m := manifest(fmt.Sprintf("w%d-%d", w, i))
					if err := ix.Put("/runs/x", m, servebench.Results{}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		ix, err := OpenIndex(location)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		list, err := ix.List(context.Background())
		if err != nil || len(list) != writers*5 {
			t.Fatalf("%d runs listed, want %d (%v)", len(list), writers*5, err)
		}
	})
}

// An --index that is neither a path nor a known URL is refused instead of becoming a folder,
// and a password in a URL never shows in a message.
func TestIndexLocation(t *testing.T) {
	for _, tc := range []struct {
		location, kind, err string
	}{
		{"runs.db", kindSQLite, ""},
		{"/var/lib/servebench/runs.db", kindSQLite, ""},
		{`C:\runs.db`, kindSQLite, ""},    // a drive letter is not a scheme
		{"./odd:name.db", kindSQLite, ""}, // a colon after a path is a file name
		{"postgres://u@db.example/runs", kindPostgres, ""},
		{"postgresql://u@db.example:5433/runs?sslmode=require", kindPostgres, ""},
		{"mysql://u:hunter2@db/runs", "", `"mysql" is not a kind of runs index`},
		{"s3://bucket/runs.db", "", `"s3" is not a kind`},
		{"odd:name.db", "", "write ./odd:name.db"},
		{"postgres:runs", "", "named by a URL"},
		{"", "", "no runs index named"},
	} {
		kind, err := indexKind(tc.location)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one saying %q", tc.location, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%q: the error shows the password: %v", tc.location, err)
			}
			continue
		}
		if err != nil || kind != tc.kind {
			t.Errorf("%q: %q %v, want %q", tc.location, kind, err, tc.kind)
		}
	}
	for in, want := range map[string]string{
		"postgres://bob:hunter2@db:5432/runs":               "postgres://bob:xxxxx@db:5432/runs",
		"postgres://bob@db/runs?password=hunter2&sslmode=x": "postgres://bob@db/runs?password=xxxxx&sslmode=x",
		"/data/runs.db": "/data/runs.db",
	} {
		if got := RedactLocation(in); got != want {
			t.Errorf("RedactLocation(%q) = %q, want %q", in, got, want)
		}
	}
}

// A server that does not answer gives an error naming the store without its password.
func TestIndexPostgresErrorHidesPassword(t *testing.T) {
	dir := t.TempDir() // no server listens on a socket here
	_, err := OpenIndex("postgres://bob:hunter2@/runs?host=" + dir + "&connect_timeout=2")
	if err == nil {
		t.Fatal("opening a store with no server must fail")
	}
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "cannot connect") {
		t.Fatalf("error %q: must say it cannot connect and never show the password", err)
	}
}

// An imported run (servebench import) lists as "imported (FORMAT)", never as a real
// measurement, in both stores; the column comes back from List and Lookup.
func TestIndexListsImportedRunsByTheirTool(t *testing.T) {
	eachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		ix, err := OpenIndex(location)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		res := servebench.Results{Cells: []servebench.CellResult{{SystemOutputThroughputTPS: 10, RequestsTotal: 2, RequestsSucceeded: 2}}}
		real, vllm, sim := manifest("20260101-real"), manifest("20260102-vllm"), manifest("20260103-guidellm")
		vllm.Imported = &servebench.ImportSource{Tool: "vllm bench serve", Format: "vllm", File: "r.json", SHA256: "ab"}
		sim.Imported = &servebench.ImportSource{Tool: "GuideLLM", Format: "guidellm", File: "b.json", SHA256: "cd"}
		sim.Simulated = true
		for i, m := range []servebench.Manifest{real, vllm, sim} {
			if err := ix.Put(fmt.Sprintf("/runs/%d", i), m, res); err != nil {
				t.Fatal(err)
			}
		}
		list, err := ix.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"20260101-real": "real", "20260102-vllm": "imported (vllm)", "20260103-guidellm": "imported (guidellm), SIMULATED"}
		if len(list) != len(want) {
			t.Fatalf("%d runs listed, want %d", len(list), len(want))
		}
		for _, e := range list {
			if got := TargetKind(e); got != want[e.ID] {
				t.Errorf("%s lists as %q, want %q", e.ID, got, want[e.ID])
			}
		}
		if e, err := ix.Lookup(ctx, "20260102"); err != nil || e.Imported != "vllm" {
			t.Errorf("lookup of the imported run: %+v %v", e, err)
		}
	})
}
